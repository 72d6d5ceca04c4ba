package launch

import (
	"context"
	"os/exec"
	"syscall"

	"github.com/toolgate/toolgate/internal/contain"
)

// startOS starts cmd in a new Job Object. A .cmd or .bat file runs through
// cmd.exe with a command line this package builds (see batchCommandLine).
func (l *Local) startOS(_ context.Context, spec Spec, path string, cmd *exec.Cmd, opts contain.StartOptions) (*contain.Process, error) {
	if isBatchFile(path) {
		comspec := cmdExe(spec.Env)
		line, err := batchCommandLine(spec.Server, comspec, path, spec.Args)
		if err != nil {
			return nil, err
		}
		cmd.Path = comspec
		cmd.Args = nil // CmdLine is the whole command line
		cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: line}
	}
	cell, err := l.containment().NewCell(spec.Server)
	if err != nil {
		return nil, err // no job: the server would not die with the host
	}
	return cell.Start(cmd, opts)
}

// cmdExe is the command interpreter for batch files: the child's COMSPEC,
// else the host's, else %SystemRoot%\System32\cmd.exe.
func cmdExe(env []string) string {
	p := hostPlatform()
	if v, ok := p.envValue(env, "COMSPEC"); ok && v != "" {
		return v
	}
	if v, ok := p.hostEnv("COMSPEC"); ok && v != "" {
		return v
	}
	root, ok := p.hostEnv("SYSTEMROOT")
	if !ok || root == "" {
		root = `C:\Windows`
	}
	return root + `\System32\cmd.exe`
}
