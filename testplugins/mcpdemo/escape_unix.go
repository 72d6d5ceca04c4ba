//go:build unix

package mcpdemo

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// spawnEscapingChild starts a long sleeper in a session of its own
// (setsid: out of this process's group, so a host that kills the group
// misses it) that inherits stdout and stderr, and writes its pid to
// pidFile. It is what servers that start language servers or browsers
// do by accident: the pipe stays open after the server itself dies.
func spawnEscapingChild(pidFile string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("spawn escaping child: find own executable: %w", err)
	}
	cmd := exec.Command(self, "--"+sleepForeverFlag)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("spawn escaping child: %w", err)
	}
	go func() { _ = cmd.Wait() }()
	return os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)), 0o600)
}
