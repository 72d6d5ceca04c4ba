//go:build linux

package launch

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	"github.com/toolgate/toolgate/internal/contain"
	"github.com/toolgate/toolgate/internal/testbin"
)

// Bounds for waits on real processes: generous, since they only guard
// against hangs; nothing asserts on durations.
const (
	hangGuard  = 30 * time.Second
	shortGrace = 100 * time.Millisecond
)

func testExecutable(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func helperSpec(t testing.TB, mode string, extra ...string) Spec {
	t.Helper()
	return Spec{Server: "helper-" + mode, Command: testExecutable(t), Env: helperEnv(mode, extra...)}
}

// newTestLocal returns a Local with short graces whose log is printed if
// the test fails.
func newTestLocal(t *testing.T, opts LocalOptions) *Local {
	t.Helper()
	var logs testbin.Buffer
	opts.Logger = hclog.New(&hclog.LoggerOptions{Name: "launch", Output: &logs, Level: hclog.Debug})
	if opts.StdinGrace == 0 {
		opts.StdinGrace = shortGrace
	}
	if opts.TermGrace == 0 {
		opts.TermGrace = shortGrace
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("launcher log:\n%s", logs.String())
		}
	})
	return NewLocal(opts)
}

func mustLaunch(t *testing.T, l *Local, spec Spec) Process {
	t.Helper()
	p, err := l.Launch(t.Context(), spec)
	if err != nil {
		t.Fatalf("Launch: %v", err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("read line: %q, %v", line, err)
	}
	return strings.TrimSuffix(line, "\n")
}

func waitExit(t *testing.T, p Process) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	err := p.Wait(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("process %d did not exit within %v", p.Pid(), hangGuard)
	}
	return err
}

func closeWithGuard(t *testing.T, p Process) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(hangGuard):
		t.Fatalf("Close did not return within %v", hangGuard)
	}
}

// exitSignal returns the signal that ended the process behind err, or 0.
func exitSignal(t *testing.T, err error) syscall.Signal {
	t.Helper()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		t.Fatalf("want an *exec.ExitError, got %v", err)
	}
	ws := exitErr.Sys().(syscall.WaitStatus)
	if !ws.Signaled() {
		return 0
	}
	return ws.Signal()
}

// openPidfd pins pid so the test can wait for its exit even though it is
// not our child.
func openPidfd(t *testing.T, pid int) int {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("pidfd_open(%d): %v", pid, err)
	}
	t.Cleanup(func() { _ = unix.Close(fd) })
	return fd
}

func pidfdExited(t *testing.T, fd int, timeout time.Duration) bool {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(max(time.Until(deadline), 0).Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			t.Fatalf("poll pidfd: %v", err)
		}
		return n > 0
	}
}

func waitGone(t *testing.T, fd int, what string) {
	t.Helper()
	if !pidfdExited(t, fd, hangGuard) {
		t.Fatalf("%s still alive %v later", what, hangGuard)
	}
}

func TestLaunchEchoRoundTrip(t *testing.T) {
	t.Parallel()
	p := mustLaunch(t, newTestLocal(t, LocalOptions{}), helperSpec(t, "echo"))
	if _, err := io.WriteString(p, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if got := readLine(t, bufio.NewReader(p)); got != `{"jsonrpc":"2.0","id":1,"method":"ping"}` {
		t.Fatalf("echo = %q", got)
	}
	closeWithGuard(t, p)
	if err := waitExit(t, p); err != nil {
		t.Fatalf("Wait after Close = %v, want a clean exit", err)
	}
}

func TestLaunchGivesChildExactlyTheBuiltEnv(t *testing.T) {
	t.Parallel()
	host := map[string]string{"HOME": "/home/u", "PATH": "/usr/bin:/bin", "AWS_SECRET_ACCESS_KEY": "s3cr3t"}
	lookup := func(k string) (string, bool) { v, ok := host[k]; return v, ok }
	env, err := BuildEnv(lookup, nil, map[string]string{helperModeEnv: "env", ownerEnv: ownerID()}, false)
	if err != nil {
		t.Fatal(err)
	}
	spec := helperSpec(t, "env")
	spec.Env = env
	p := mustLaunch(t, newTestLocal(t, LocalOptions{}), spec)
	out, err := io.ReadAll(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := waitExit(t, p); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	slices.Sort(got)
	if diff := cmp.Diff(env, got); diff != "" {
		t.Fatalf("child environment (-built +seen):\n%s", diff)
	}
}

func TestCloseLetsWellBehavedServerExitOnStdinEOF(t *testing.T) {
	t.Parallel()
	// Long graces: a signal would only be sent after a minute, so a clean
	// exit status proves the server ended on stdin EOF alone.
	l := newTestLocal(t, LocalOptions{StdinGrace: time.Minute, TermGrace: time.Minute})
	p := mustLaunch(t, l, helperSpec(t, "echo"))
	closeWithGuard(t, p)
	if err := waitExit(t, p); err != nil {
		t.Fatalf("Wait = %v, want exit status 0", err)
	}
}

func TestCloseEscalates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode       string
		wantSignal syscall.Signal
	}{
		{mode: "hang", wantSignal: syscall.SIGTERM},        // ignores stdin EOF, honours SIGTERM
		{mode: "ignore-term", wantSignal: syscall.SIGKILL}, // ignores both
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			p := mustLaunch(t, newTestLocal(t, LocalOptions{}), helperSpec(t, tt.mode))
			if got := readLine(t, bufio.NewReader(p)); got != "ready" {
				t.Fatalf("first line = %q", got)
			}
			closeWithGuard(t, p)
			if got := exitSignal(t, waitExit(t, p)); got != tt.wantSignal {
				t.Fatalf("ended by signal %v, want %v", got, tt.wantSignal)
			}
		})
	}
}

// startGrandchildParent launches a leader that starts a grandchild in its
// process group and returns the leader and a pidfd for the grandchild.
func startGrandchildParent(t *testing.T, l *Local, grandchildMode, after string) (Process, int) {
	t.Helper()
	p := mustLaunch(t, l, helperSpec(t, "grandchild", grandchildEnv+"="+grandchildMode, afterSpawnEnv+"="+after))
	pid, err := strconv.Atoi(readLine(t, bufio.NewReader(p)))
	if err != nil {
		t.Fatal(err)
	}
	fd := openPidfd(t, pid)
	if pidfdExited(t, fd, 0) {
		t.Fatalf("grandchild %d already gone before the test acts", pid)
	}
	return p, fd
}

func TestCloseEndsDescendantsInGroup(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"hang", "ignore-term"} {
		t.Run("grandchild "+mode, func(t *testing.T) {
			t.Parallel()
			p, grandchild := startGrandchildParent(t, newTestLocal(t, LocalOptions{}), mode, "echo")
			closeWithGuard(t, p)
			if err := waitExit(t, p); err != nil {
				t.Fatalf("leader: %v, want a clean exit on stdin EOF", err)
			}
			// Close returned after reaping the leader, which happens once
			// the rest of the group is ended; allow only for the kernel's
			// delivery of the final exit.
			waitGone(t, grandchild, "grandchild")
		})
	}
}

func TestLeaderExitEndsRestOfGroup(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"hang", "ignore-term"} {
		t.Run("grandchild "+mode, func(t *testing.T) {
			t.Parallel()
			p, grandchild := startGrandchildParent(t, newTestLocal(t, LocalOptions{}), mode, "exit")
			err := waitExit(t, p) // no Close: the leader exits on its own
			var exitErr *exec.ExitError
			if !errors.As(err, &exitErr) || exitErr.ExitCode() != 3 {
				t.Fatalf("Wait = %v, want exit status 3", err)
			}
			waitGone(t, grandchild, "grandchild")
		})
	}
}

func TestKillEndsGroupAtOnce(t *testing.T) {
	t.Parallel()
	l := newTestLocal(t, LocalOptions{StdinGrace: time.Minute, TermGrace: time.Minute})
	p, grandchild := startGrandchildParent(t, l, "ignore-term", "echo")
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if got := exitSignal(t, waitExit(t, p)); got != syscall.SIGKILL {
		t.Fatalf("leader ended by %v, want SIGKILL", got)
	}
	waitGone(t, grandchild, "grandchild")
	if err := p.Kill(); err != nil {
		t.Fatalf("Kill after exit = %v, want nil", err)
	}
}

// startHelperHost starts the test binary as a host in helper mode and
// returns it with the first line it prints (the pids it launched).
func startHelperHost(t *testing.T, mode string) (*exec.Cmd, string) {
	t.Helper()
	host := exec.Command(testExecutable(t))
	host.Env = helperEnv(mode)
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = host.Process.Kill()
		_ = host.Wait()
	})
	return host, readLine(t, bufio.NewReader(out))
}

func TestChildDiesWithHost(t *testing.T) {
	t.Parallel()
	host, line := startHelperHost(t, "launch")
	pid, err := strconv.Atoi(line)
	if err != nil {
		t.Fatal(err)
	}
	child := openPidfd(t, pid)
	if pidfdExited(t, child, 0) {
		t.Fatal("child gone before the host was killed")
	}
	if err := host.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = host.Wait()
	waitGone(t, child, "child of the SIGKILLed host")
}

// Pdeathsig fires when the forking thread exits. A caller whose goroutine is
// locked to its thread and exits makes the runtime end that thread; the
// child must survive it.
func TestChildOutlivesLaunchingThread(t *testing.T) {
	t.Parallel()
	l := newTestLocal(t, LocalOptions{})
	type launched struct {
		p   Process
		err error
		tid int
	}
	launchThenEndThread := func() launched {
		// Locked and never unlocked: the runtime ends this thread when the
		// goroutine returns.
		runtime.LockOSThread()
		p, err := l.Launch(context.Background(), helperSpec(t, "echo"))
		return launched{p: p, err: err, tid: unix.Gettid()}
	}
	results := make(chan launched, 1)
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() != os.Getpid() {
			results <- launchThenEndThread()
			return
		}
		// The runtime never ends the main thread; hold it so the launch runs
		// on another one.
		inner := make(chan launched, 1)
		go func() { inner <- launchThenEndThread() }()
		results <- <-inner
		runtime.UnlockOSThread()
	}()
	r := <-results
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { _ = r.p.Close() })
	waitThreadGone(t, r.tid)

	if _, err := io.WriteString(r.p, "still here\n"); err != nil {
		t.Fatalf("write after the launching thread ended: %v", err)
	}
	if got := readLine(t, bufio.NewReader(r.p)); got != "still here" {
		t.Fatalf("echo = %q", got)
	}
	closeWithGuard(t, r.p)
	if err := waitExit(t, r.p); err != nil {
		t.Fatalf("Wait = %v, want a clean exit (no Pdeathsig)", err)
	}
}

// waitThreadGone polls /proc (the kernel offers no event for one thread of
// our own process) until the thread has exited.
func waitThreadGone(t *testing.T, tid int) {
	t.Helper()
	path := "/proc/self/task/" + strconv.Itoa(tid)
	ticker := time.NewTicker(5 * time.Millisecond)
	defer ticker.Stop()
	deadline := time.After(hangGuard)
	for {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return
		}
		select {
		case <-ticker.C:
		case <-deadline:
			t.Fatalf("thread %d still exists after %v", tid, hangGuard)
		}
	}
}

func TestCloseIsIdempotentAndUnblocksRead(t *testing.T) {
	t.Parallel()
	p := mustLaunch(t, newTestLocal(t, LocalOptions{}), helperSpec(t, "hang"))
	if got := readLine(t, bufio.NewReader(p)); got != "ready" {
		t.Fatalf("first line = %q", got)
	}
	readErr := make(chan error, 1)
	go func() {
		_, err := p.Read(make([]byte, 16)) // the child writes nothing more
		readErr <- err
	}()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = p.Close() })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("concurrent Close #%d = %v", i, err)
		}
	}
	select {
	case err := <-readErr:
		if !errors.Is(err, io.EOF) {
			t.Fatalf("pending Read returned %v, want io.EOF", err)
		}
	case <-time.After(hangGuard):
		t.Fatal("pending Read still blocked after Close returned")
	}
	if _, err := p.Write([]byte("x\n")); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Write after Close = %v, want os.ErrClosed", err)
	}
	if n, err := p.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("Read after Close = %d, %v; want 0, io.EOF", n, err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if got := exitSignal(t, waitExit(t, p)); got != syscall.SIGTERM {
		t.Fatalf("exit signal = %v, want SIGTERM", got)
	}
}

func TestWaitHonoursContext(t *testing.T) {
	t.Parallel()
	p := mustLaunch(t, newTestLocal(t, LocalOptions{}), helperSpec(t, "hang"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with a cancelled ctx on a running child = %v, want context.Canceled", err)
	}
	if got := readLine(t, bufio.NewReader(p)); got != "ready" {
		t.Fatalf("first line = %q", got)
	}
	closeWithGuard(t, p)
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	// Once the child is reaped its status wins over a cancelled ctx.
	if got := exitSignal(t, p.Wait(ctx)); got != syscall.SIGTERM {
		t.Fatalf("exit signal = %v, want SIGTERM", got)
	}
}

func TestStderrIsLoggedLineByLine(t *testing.T) {
	t.Parallel()
	p := mustLaunch(t, newTestLocal(t, LocalOptions{}), helperSpec(t, "stderr"))
	var logs testbin.Buffer
	pumped := make(chan struct{})
	go func() {
		defer close(pumped)
		PumpStderr(p.Stderr(), jsonLogger(&logs))
	}()
	if err := waitExit(t, p); err != nil {
		t.Fatal(err)
	}
	select {
	case <-pumped:
	case <-time.After(hangGuard):
		t.Fatal("PumpStderr did not return at EOF")
	}
	want := []string{"first line", "crlf line", `bad \xff\xfe bytes`, strings.Repeat("é", 4096), strings.Repeat("é", 904), "last line without newline"}
	if diff := cmp.Diff(want, stderrLines(t, logs.String())); diff != "" {
		t.Fatalf("logged stderr lines (-want +got):\n%s", diff)
	}
}

func TestStderrReaderEndsAfterClose(t *testing.T) {
	t.Parallel()
	// "hang" keeps its stderr open until it is signalled, so the reader can
	// only end because Close ended the process.
	p := mustLaunch(t, newTestLocal(t, LocalOptions{}), helperSpec(t, "hang"))
	pumped := make(chan struct{})
	go func() {
		defer close(pumped)
		PumpStderr(p.Stderr(), nil)
	}()
	if got := readLine(t, bufio.NewReader(p)); got != "ready" {
		t.Fatalf("first line = %q", got)
	}
	closeWithGuard(t, p)
	select {
	case <-pumped:
	case <-time.After(hangGuard):
		t.Fatal("PumpStderr still running after Close")
	}
}

func TestLaunchErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plainFile := filepath.Join(dir, "not-a-program")
	if err := os.WriteFile(plainFile, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	const secret = "hunter2-secret-value"

	tests := []struct {
		name     string
		ctx      context.Context
		spec     Spec
		want     []string // substrings of the error
		wantNone []string
	}{
		{
			name: "bare command not in PATH",
			spec: Spec{Server: "s", Command: "toolgate-no-such-command",
				Env: []string{"PATH=/nonexistent-a:/nonexistent-b", "API_TOKEN=" + secret}},
			want: []string{`starting server process "s"`, `command "toolgate-no-such-command" not found in PATH (/nonexistent-a:/nonexistent-b)`,
				"set command to an absolute path or add its directory to PATH"},
			wantNone: []string{secret},
		},
		{
			name: "empty PATH",
			spec: Spec{Server: "s", Command: "toolgate-no-such-command", Env: []string{"PATH="}},
			want: []string{"not found in PATH (PATH is empty)"},
		},
		{
			name: "found in PATH but not executable",
			spec: Spec{Server: "s", Command: "not-a-program", Env: []string{"PATH=" + dir}},
			want: []string{plainFile, "not an executable file", "chmod +x"},
		},
		{
			name: "absolute path not executable",
			spec: Spec{Server: "s", Command: plainFile},
			want: []string{plainFile, "not an executable file"},
		},
		{
			name: "absolute path missing",
			spec: Spec{Server: "s", Command: filepath.Join(dir, "missing")},
			want: []string{filepath.Join(dir, "missing"), "does not exist", "set command"},
		},
		{
			name: "Windows path on this OS",
			spec: Spec{Server: "s", Command: `C:\tools\srv.exe`},
			want: []string{`command "C:\\tools\\srv.exe" is a Windows path, but this host runs linux`},
		},
		{
			name: "no command",
			spec: Spec{Server: "s"},
			want: []string{"no command given"},
		},
		{
			name: "missing working directory",
			spec: Spec{Server: "s", Command: testExecutable(t), Dir: filepath.Join(dir, "gone")},
			want: []string{`working directory "` + filepath.Join(dir, "gone") + `" does not exist`, "set cwd"},
		},
		{
			name: "working directory is a file",
			spec: Spec{Server: "s", Command: testExecutable(t), Dir: plainFile},
			want: []string{"is not a directory"},
		},
		{
			name: "cancelled before start",
			ctx:  cancelled,
			spec: helperSpec(t, "echo"),
			want: []string{"context canceled"},
		},
	}
	l := newTestLocal(t, LocalOptions{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = t.Context()
			}
			p, err := l.Launch(ctx, tt.spec)
			if err == nil {
				_ = p.Close()
				t.Fatal("Launch succeeded, want an error")
			}
			if !errors.Is(err, ErrStart) {
				t.Errorf("error %q does not match ErrStart", err)
			}
			for _, s := range tt.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
			for _, s := range tt.wantNone {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error %q leaks %q", err, s)
				}
			}
		})
	}
}

// A bare command is looked up in the PATH of the child's environment; the
// host's PATH is only the fallback when that environment has none.
func TestLaunchResolvesBareCommand(t *testing.T) { // not parallel: sets the host PATH
	binDir := t.TempDir()
	if err := os.Symlink(testExecutable(t), filepath.Join(binDir, "toolgate-test-helper")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		hostPATH string
		envPATH  []string
		wantErr  bool
	}{
		{name: "child PATH", hostPATH: "/nonexistent", envPATH: []string{"PATH=" + binDir}},
		{name: "host PATH fallback", hostPATH: binDir},
		{name: "child PATH wins over host PATH", hostPATH: binDir, envPATH: []string{"PATH=/nonexistent"}, wantErr: true},
		{name: "relative PATH entries are skipped", hostPATH: "/nonexistent", envPATH: []string{"PATH=."}, wantErr: true},
	}
	l := newTestLocal(t, LocalOptions{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PATH", tt.hostPATH)
			if tt.name == "relative PATH entries are skipped" {
				t.Chdir(binDir)
			}
			spec := Spec{Server: "s", Command: "toolgate-test-helper",
				Env: helperEnv("exit", append([]string{exitCodeEnv + "=0"}, tt.envPATH...)...)}
			p, err := l.Launch(t.Context(), spec)
			if tt.wantErr {
				if err == nil {
					_ = p.Close()
					t.Fatal("Launch succeeded, want command not found")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if err := waitExit(t, p); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestZeroLocalUsesDefaults(t *testing.T) {
	t.Parallel()
	var l Local
	p, err := l.Launch(t.Context(), helperSpec(t, "echo"))
	if err != nil {
		t.Fatal(err)
	}
	closeWithGuard(t, p)
	if err := waitExit(t, p); err != nil {
		t.Fatal(err)
	}
}

func TestParseStat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in        string
		wantState byte
		wantPgrp  int
		wantOK    bool
	}{
		{in: "42 (sleep) S 1 40 40 0 -1", wantState: 'S', wantPgrp: 40, wantOK: true},
		{in: "42 (a) b (c)) Z 1 7 7 0", wantState: 'Z', wantPgrp: 7, wantOK: true},
		{in: "42 (x", wantOK: false},
		{in: "42 (x) R 1", wantOK: false},
	}
	for _, tt := range tests {
		state, pgrp, ok := parseStat([]byte(tt.in))
		if state != tt.wantState || pgrp != tt.wantPgrp || ok != tt.wantOK {
			t.Errorf("parseStat(%q) = %q, %d, %v; want %q, %d, %v", tt.in, state, pgrp, ok, tt.wantState, tt.wantPgrp, tt.wantOK)
		}
	}
}

// BenchmarkLaunchClose measures a full start and graceful stop of a server
// that exits at stdin EOF (the test binary, so it includes Go start-up).
func BenchmarkLaunchClose(b *testing.B) {
	l := NewLocal(LocalOptions{})
	spec := helperSpec(b, "echo")
	for b.Loop() {
		p, err := l.Launch(context.Background(), spec)
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLaunchCloseContainment compares a server's start and stop in
// each containment against the process group alone (the baseline, in the
// same run): what a cgroup or the subreaper walk costs per server.
func BenchmarkLaunchCloseContainment(b *testing.B) {
	spec := helperSpec(b, "echo")
	for _, kind := range []contain.Kind{contain.KindProcessGroup, contain.KindCgroup, contain.KindSubreaper} {
		b.Run(string(kind), func(b *testing.B) {
			mode := kind
			if kind == contain.KindCgroup {
				mode = ""
			}
			l := NewLocal(LocalOptions{})
			l.cells = contain.NewManager(mode)
			if got, why := l.cells.Kind(); got != kind {
				b.Skipf("containment here is %s: %v", got, why)
			}
			for b.Loop() {
				p, err := l.Launch(context.Background(), spec)
				if err != nil {
					b.Fatal(err)
				}
				if err := p.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
