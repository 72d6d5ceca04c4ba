//go:build !linux

package launcher

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// signalLocked signals the child only: without Linux's process-group and
// wait-without-reaping guarantees, the group is not signalled.
func (p *commandProcess) signalLocked(sig Signal) error {
	var err error
	if sig == SignalKill {
		err = p.cmd.Process.Kill()
	} else {
		err = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}

func (p *commandProcess) endRestOfGroupLocked() {}

var errNoWaitKeepZombie = errors.New("waiting without reaping is not supported here")

func waitExitedKeepZombie(int) error { return errNoWaitKeepZombie }

func exitErrorOf(xe *exec.ExitError) *ExitError {
	return &ExitError{Code: xe.ExitCode(), Message: xe.String()}
}
