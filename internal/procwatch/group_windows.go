package procwatch

import (
	"fmt"
	"os/exec"
	"strconv"
)

// OwnGroup does nothing on Windows, which has no process groups;
// [KillGroup] ends the process tree instead.
func OwnGroup(cmd *exec.Cmd) *exec.Cmd { return cmd }

// KillGroup ends the process tree rooted at pid with taskkill /T /F (the
// Windows stand-in for a process group). A tree that is already gone is
// not an error.
func KillGroup(pid int) error {
	if !Alive(pid) {
		return nil
	}
	out, err := exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(pid)).CombinedOutput()
	if err != nil && Alive(pid) {
		return fmt.Errorf("taskkill %d: %w: %s", pid, err, out)
	}
	return nil
}
