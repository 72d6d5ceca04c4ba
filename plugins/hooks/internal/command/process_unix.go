//go:build unix

package command

import (
	"os/exec"
	"syscall"
)

// isolate starts the program in its own process group and makes
// cancellation kill the whole group, so that a script's children (a sleep, a
// pipeline) die with it instead of holding its pipes open.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
