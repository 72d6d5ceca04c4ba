package procwatch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
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

// WaitLine reads r line by line until a line matches re and returns the
// first submatch (or the whole match). It keeps draining r afterwards in
// a goroutine that ends at EOF, so a child never blocks on a full pipe.
func WaitLine(ctx context.Context, r io.Reader, re *regexp.Regexp) (string, error) {
	type result struct {
		s   string
		err error
	}
	found := make(chan result, 1)
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		sent := false
		var seen []string
		for sc.Scan() {
			if sent {
				continue
			}
			line := sc.Text()
			seen = append(seen, line)
			if m := re.FindStringSubmatch(line); m != nil {
				s := m[0]
				if len(m) > 1 {
					s = m[1]
				}
				found <- result{s: s}
				sent = true
			}
		}
		if !sent {
			found <- result{err: fmt.Errorf("no line matched %q before EOF; got:\n%s", re, strings.Join(seen, "\n"))}
		}
	}()
	select {
	case r := <-found:
		return r.s, r.err
	case <-ctx.Done():
		return "", ctx.Err()
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

// LineFIFO creates a named pipe in dir and returns its path and a channel
// of the lines written to it. Tests hand the path to a process (e.g.
// mcp-demo --call-log) and wait on lines instead of polling a file. The
// reader ends when stop is called; stop is idempotent.
func LineFIFO(dir string) (path string, lines <-chan string, stop func(), err error) {
	path = filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(path, 0o600); err != nil {
		return "", nil, nil, fmt.Errorf("mkfifo: %w", err)
	}
	// O_RDWR keeps the FIFO open for reading without waiting for a writer
	// and means a writer closing does not end our stream.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return "", nil, nil, err
	}
	ch := make(chan string, 1024)
	done, quit := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer close(ch)
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			select {
			case ch <- sc.Text():
			case <-quit:
				return
			}
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			close(quit)
			_ = f.Close()
			<-done
		})
	}
	return path, ch, stop, nil
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
