//go:build linux

package pluginhost

import (
	"os/exec"
	"syscall"
)

// setPdeathsig makes the kernel SIGKILL the plugin when the host dies,
// even by SIGKILL, when go-plugin gets no chance to stop it.
func setPdeathsig(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
