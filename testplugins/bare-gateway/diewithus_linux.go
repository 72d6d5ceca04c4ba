package main

import (
	"os/exec"
	"syscall"
)

// dieWithUs has the kernel kill the server when this gateway dies.
func dieWithUs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
