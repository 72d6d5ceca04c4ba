//go:build unix && !linux

package procwatch

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// Alive reports whether pid exists and has not exited (a zombie has).
func Alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return len(psWhere(func(e psEntry) bool { return e.pid == pid })) > 0
}

// GroupMembers returns the live processes of process group pgid, except
// pgid itself.
func GroupMembers(pgid int) []int {
	return psWhere(func(e psEntry) bool { return e.pid != pgid && e.pgid == pgid })
}

// Children returns the live processes whose parent is ppid.
func Children(ppid int) []int {
	return psWhere(func(e psEntry) bool { return e.ppid == ppid })
}

// CPUTime is the CPU time pid has used so far, as ps reports it; zero when
// it cannot be read.
func CPUTime(pid int) time.Duration {
	table, err := psTable()
	if err != nil {
		return 0
	}
	for _, e := range table {
		if e.pid == pid {
			return e.cpu
		}
	}
	return 0
}

// WaitGone blocks until pid has exited (or is a zombie) or ctx is done.
//
// Weaker than on Linux: without pidfds this polls with a growing interval
// (up to 50 ms), so it notices an exit a little late, never early.
func WaitGone(ctx context.Context, pid int) error {
	interval := time.Millisecond
	for Alive(pid) {
		timer := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			timer.Stop()
			return fmt.Errorf("process %d still alive: %w", pid, ctx.Err())
		case <-timer.C:
		}
		interval = min(interval*2, 50*time.Millisecond)
	}
	return nil
}

// DieWithTest is a no-op outside Linux, which alone has a parent-death
// signal: a test that times out there may leave the processes it started
// behind (CI runners end them with the job). Tests still end their
// processes through their cleanups.
func DieWithTest(cmd *exec.Cmd) *exec.Cmd { return cmd }
