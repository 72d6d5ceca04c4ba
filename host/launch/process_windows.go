package launch

import (
	"context"
	"fmt"
	"os/exec"
	"syscall"

	"github.com/toolgate/toolgate/internal/contain"
)

// osProcess is the Windows part of a localProcess: its cell, the Job
// Object holding the server and everything it starts (internal/contain),
// which Windows ends with the host.
type osProcess struct {
	cell *contain.Cell
}

// startOS starts cmd in a new Job Object. A .cmd or .bat file runs through
// cmd.exe with a command line this package builds (see batchCommandLine).
func (l *Local) startOS(_ context.Context, spec Spec, path string, cmd *exec.Cmd) (*osProcess, error) {
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
	cell.Prepare(cmd)
	if err := cmd.Start(); err != nil {
		_ = cell.Close()
		return nil, err
	}
	if err := cell.Started(cmd.Process.Pid); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = cell.Close()
		return nil, err
	}
	return &osProcess{cell: cell}, nil
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

// do carries out one step of the shutdown plan.
func (p *localProcess) do(a shutdownAction) error {
	switch a {
	case closeStdin:
		return p.closeStdin()
	case terminateJob:
		return p.terminateJob()
	default:
		return fmt.Errorf("shutdown step %v is not available on Windows", a)
	}
}

// Kill terminates every process in the server's job at once. It does not
// wait; Close (still needed to release the pipes) or Wait does.
func (p *localProcess) Kill() error { return p.terminateJob() }

func (p *localProcess) terminateJob() error {
	if err := p.cell.Kill(); err != nil {
		return fmt.Errorf("server %q: %w", p.server, err)
	}
	return nil
}

// reap waits for the leader, then ends whatever it left in its job (an
// npx wrapper's real server, say): Windows has no signal to ask them
// first, and they were the leader's to end. Closing the job handle would
// end them too; terminating first makes it explicit.
func (p *localProcess) reap() {
	p.setWaitErr(p.cmd.Wait())
	close(p.exited)
	if err := p.cell.Close(); err != nil {
		p.log.Warn("could not end the rest of the server's job", "error", err)
	}
	p.log.Debug("server process exited", "status", p.cmd.ProcessState.String())
	close(p.done)
}
