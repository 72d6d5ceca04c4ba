package mcpdemo

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestProcessSpawnChildSharesTheProcessGroup(t *testing.T) {
	cmd, stderr := demoCommand(t, "--spawn-child")
	cmd.SysProcAttr.Setpgid = true
	cs, err := connectProcess(t, testCtx(t), cmd, legacyVersion)
	if err != nil {
		t.Fatal(err)
	}
	line := stderr.waitContaining(t, "child pid ")
	child, err := strconv.Atoi(strings.TrimPrefix(line, "child pid "))
	if err != nil {
		t.Fatalf("parse %q: %v", line, err)
	}
	pidfd, err := unix.PidfdOpen(child, 0)
	if err != nil {
		t.Fatalf("child %d is not running: %v", child, err)
	}
	defer unix.Close(pidfd)
	pgid, err := unix.Getpgid(child)
	if err != nil {
		t.Fatal(err)
	}
	if pgid != cmd.Process.Pid {
		t.Errorf("child is in group %d, want the server's group %d", pgid, cmd.Process.Pid)
	}

	// Killing the group must take the grandchild too.
	if err := unix.Kill(-cmd.Process.Pid, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(testTimeout/time.Millisecond))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n != 1 {
			t.Fatalf("child %d did not exit after the group kill: n=%d err=%v", child, n, err)
		}
		break
	}
	_ = cs.Close()
}
