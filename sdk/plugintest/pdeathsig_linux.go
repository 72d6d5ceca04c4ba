//go:build linux

package plugintest

import (
	"os/exec"
	"syscall"
)

// setPdeathsig makes the plugin die with the test binary, even if the test
// binary is killed (go-plugin alone would leave it running).
func setPdeathsig(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
