//go:build unix

package mcpdemo

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// spawnFamily starts three long sleepers in this process's group; the
// first starts a fourth in a session of its own (setsid), the pattern of
// servers that start language servers or browsers. Once all run it
// appends the line "SERVER CHILD CHILD CHILD GRANDCHILD" to pidFile (a
// file or a FIFO).
func spawnFamily(pidFile string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("spawn family: find own executable: %w", err)
	}
	pids := []string{strconv.Itoa(os.Getpid())}
	var grandchild string
	for i := range 3 {
		cmd := exec.Command(self, "--"+sleepForeverFlag)
		var out io.ReadCloser
		if i == 0 {
			cmd = exec.Command(self, "--"+familyParentFlag)
			if out, err = cmd.StdoutPipe(); err != nil {
				return fmt.Errorf("spawn family: %w", err)
			}
		}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("spawn family: %w", err)
		}
		pids = append(pids, strconv.Itoa(cmd.Process.Pid))
		if out != nil {
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				return fmt.Errorf("spawn family: read the grandchild's pid: %w", err)
			}
			grandchild = strings.TrimSpace(line)
		}
		// Reap it if it dies first, so it never lingers as a zombie of ours.
		go func() { _ = cmd.Wait() }()
	}
	pids = append(pids, grandchild)
	// One write of one line: a reader of a FIFO (or of the file once the
	// server runs) never sees half of it.
	f, err := os.OpenFile(pidFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("spawn family: %w", err)
	}
	_, err = f.WriteString(strings.Join(pids, " ") + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("spawn family: %w", err)
	}
	return nil
}

// runFamilyParent is the first --spawn-family child: it starts the
// setsid grandchild and prints its pid on stdout.
func runFamilyParent(stdout io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("family parent: find own executable: %w", err)
	}
	cmd := exec.Command(self, "--"+sleepForeverFlag)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("family parent: %w", err)
	}
	go func() { _ = cmd.Wait() }()
	_, err = fmt.Fprintf(stdout, "%d\n", cmd.Process.Pid)
	return err
}
