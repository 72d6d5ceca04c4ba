//go:build linux

package launcher

import (
	"errors"
	"os/exec"
	"syscall"
	"unsafe"
)

// signalLocked signals the child's process group; the caller holds p.mu
// and has checked that the child is not reaped, so the group id still
// names the child's group.
func (p *commandProcess) signalLocked(sig Signal) error {
	s := syscall.SIGTERM
	if sig == SignalKill {
		s = syscall.SIGKILL
	}
	// The cell first: the subreaper's walk follows parent links, which
	// the group's signal would cut.
	cerr := p.cell.SignalOthers(s)
	if err := syscall.Kill(-p.cmd.Process.Pid, s); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return cerr
}

// endRestOfGroupLocked asks what is left of the exited child's group and
// cell to end; the child is still a zombie, so its group id is still its
// own.
func (p *commandProcess) endRestOfGroupLocked() {
	_ = p.cell.SignalOthers(syscall.SIGTERM)
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
}

// waitExitedKeepZombie blocks until pid has exited without reaping it
// (waitid with WNOWAIT).
func waitExitedKeepZombie(pid int) error {
	const (
		pPID    = 1          // P_PID
		wExited = 0x4        // WEXITED
		wNoWait = 0x01000000 // WNOWAIT
	)
	var info [128]byte // siginfo_t; only the wait matters
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), wExited|wNoWait, 0, 0)
		switch errno {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		default:
			return errno
		}
	}
}

func exitErrorOf(xe *exec.ExitError) *ExitError {
	if ws, ok := xe.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return &ExitError{Code: -1, Signal: signalName(ws.Signal())}
	}
	return &ExitError{Code: xe.ExitCode()}
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGBUS:
		return "SIGBUS"
	}
	return "signal " + s.String()
}
