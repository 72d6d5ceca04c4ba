package launch

import (
	"context"
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// osProcess is the Windows part of a localProcess: the Job Object holding
// the server and everything it starts. The job is created with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE and its only handle is the host's, so
// when the host exits (even killed) Windows closes the handle and ends
// every process in the job.
type osProcess struct {
	mu     sync.Mutex
	job    windows.Handle // 0 once closed
	closed bool
}

// startOS starts cmd in a new Job Object. A .cmd or .bat file runs through
// cmd.exe with a command line this package builds (see batchCommandLine).
//
// The process is assigned to the job right after it starts; a child it
// spawns within those first microseconds would escape the job (Go's
// os/exec cannot start a process suspended and resume it).
func (l *Local) startOS(_ context.Context, spec Spec, path string, cmd *exec.Cmd) (*osProcess, error) {
	attr := &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
	if isBatchFile(path) {
		comspec := cmdExe(spec.Env)
		line, err := batchCommandLine(spec.Server, comspec, path, spec.Args)
		if err != nil {
			return nil, err
		}
		cmd.Path = comspec
		cmd.Args = nil // CmdLine is the whole command line
		attr.CmdLine = line
	}
	cmd.SysProcAttr = attr

	job, err := newKillOnCloseJob()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		_ = windows.CloseHandle(job)
		return nil, err
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid))
	if err == nil {
		err = windows.AssignProcessToJobObject(job, h)
		_ = windows.CloseHandle(h)
	}
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = windows.CloseHandle(job)
		return nil, fmt.Errorf("put the server in a job object (so it dies with the host): %w", err)
	}
	return &osProcess{job: job}, nil
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

func newKillOnCloseJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("create job object: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
		},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(job)
		return 0, fmt.Errorf("set kill-on-close on job object: %w", err)
	}
	return job, nil
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
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	if err := windows.TerminateJobObject(p.job, 1); err != nil {
		return fmt.Errorf("terminate the job object of server %q: %w", p.server, err)
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
	if err := p.terminateJob(); err != nil {
		p.log.Warn("could not end the rest of the server's job", "error", err)
	}
	p.mu.Lock()
	p.closed = true
	_ = windows.CloseHandle(p.job)
	p.mu.Unlock()
	p.log.Debug("server process exited", "status", p.cmd.ProcessState.String())
	close(p.done)
}
