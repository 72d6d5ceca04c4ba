package procwatch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Alive reports whether pid exists and has not exited (a zombie or a dead
// process has).
func Alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	st, ok := parseStat(string(b))
	return ok && st.live()
}

// GroupMembers returns the live processes of process group pgid, except
// pgid itself.
func GroupMembers(pgid int) []int {
	return liveWhere(func(pid int, st stat) bool { return pid != pgid && st.pgrp == pgid })
}

// Children returns the live processes whose parent is ppid.
func Children(ppid int) []int {
	return liveWhere(func(_ int, st stat) bool { return st.ppid == ppid })
}

// CPUTime is the CPU time (user and system) pid has used so far; zero when
// it cannot be read.
func CPUTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	st, _ := parseStat(string(b))
	return st.cpu
}

// liveWhere lists the live processes whose stat matches.
func liveWhere(match func(pid int, st stat) bool) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if st, ok := parseStat(string(b)); ok && st.live() && match(pid, st) {
			out = append(out, pid)
		}
	}
	return out
}

// WaitGone blocks until pid has exited (or is a zombie) or ctx is done.
func WaitGone(ctx context.Context, pid int) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pidfd_open %d: %w", pid, err)
	}
	defer unix.Close(fd)
	for {
		if !Alive(pid) {
			return nil
		}
		// Poll in short slices so ctx is honoured; the pidfd becomes
		// readable the moment the process exits.
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 50)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("polling pidfd of %d: %w", pid, err)
		}
		if n > 0 {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("process %d still alive: %w", pid, ctx.Err())
		}
	}
}

type stat struct {
	state      string
	ppid, pgrp int
	cpu        time.Duration // utime + stime
}

func (st stat) live() bool { return st.state != "Z" && st.state != "X" }

// parseStat reads /proc/<pid>/stat; the command name may hold spaces and
// parentheses, so fields are counted from the last ')'. CPU times are in
// clock ticks of 10 ms: Linux's USER_HZ is 100 on every architecture Go
// supports.
func parseStat(s string) (stat, bool) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return stat{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return stat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	utime, err3 := strconv.Atoi(f[11])
	stime, err4 := strconv.Atoi(f[12])
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return stat{}, false
	}
	return stat{state: f[0], ppid: ppid, pgrp: pgrp, cpu: time.Duration(utime+stime) * 10 * time.Millisecond}, true
}

// DieWithTest makes the kernel kill cmd's process when the test binary
// dies: a test that times out exits without running its cleanups, and
// the servers it started must not outlive it. Call before cmd.Start.
func DieWithTest(cmd *exec.Cmd) *exec.Cmd {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	return cmd
}
