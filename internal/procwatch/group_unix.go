//go:build unix

package procwatch

import (
	"errors"
	"os/exec"
	"syscall"
)

// OwnGroup starts cmd in a process group of its own (pgid = its pid), so
// that [KillGroup] ends it with everything it started. Call before Start.
func OwnGroup(cmd *exec.Cmd) *exec.Cmd {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	return cmd
}

// KillGroup sends SIGKILL to process group pgid. A group that is already
// gone is not an error.
func KillGroup(pgid int) error {
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}
