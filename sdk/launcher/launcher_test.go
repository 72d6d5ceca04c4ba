package launcher_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/launcher"
	"github.com/toolgate/toolgate/sdk/plugintest"
)

// local runs processes on this machine with StartCommand.
type local struct{}

func (local) Start(_ context.Context, spec launcher.Spec) (launcher.Process, error) {
	cmd := exec.Command(spec.Command, spec.Args...)
	cmd.Env = spec.Environ()
	cmd.Dir = spec.Dir
	return launcher.StartCommand(cmd)
}

type startFunc func(context.Context, launcher.Spec) (launcher.Process, error)

func (f startFunc) Start(ctx context.Context, spec launcher.Spec) (launcher.Process, error) {
	return f(ctx, spec)
}

var fastClose = launcher.ClientOptions{StdinGrace: 200 * time.Millisecond, TermGrace: 200 * time.Millisecond, KillGrace: 2 * time.Second}

func testExe(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// ioMode is one way a process's I/O can travel; the tests of behaviour a
// user sees run in each.
type ioMode struct {
	name       string
	streamOnly bool
}

// opts returns o for this mode.
func (m ioMode) opts(o launcher.ClientOptions) launcher.ClientOptions {
	o.StreamOnly = m.streamOnly
	return o
}

// want is the mode a process launched with pipes gets on this system.
func (m ioMode) want() launcher.IOMode {
	if m.streamOnly || runtime.GOOS != "linux" {
		return launcher.ModeStream
	}
	return launcher.ModePassedFDs
}

func forEachMode(t *testing.T, test func(t *testing.T, m ioMode)) {
	for _, m := range []ioMode{{name: "passed-fds"}, {name: "stream", streamOnly: true}} {
		t.Run(m.name, func(t *testing.T) { test(t, m) })
	}
}

// launch starts the test binary in helper mode through an in-process
// launcher plugin and closes it when the test ends. It checks that the
// I/O mode is the one opts lead to.
func launch(t testing.TB, opts launcher.ClientOptions, mode string, env ...string) *launcher.RemoteProcess {
	t.Helper()
	c := plugintest.LauncherWith(t, local{}, opts)
	p, err := c.Launch(context.Background(), launcher.Spec{Server: "helper", Command: testExe(t), Env: helperSpecEnv(mode, env...)})
	if err != nil {
		t.Fatalf("Launch: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	if want := (ioMode{streamOnly: opts.StreamOnly}).want(); p.Mode() != want {
		t.Fatalf("I/O mode = %v, want %v", p.Mode(), want)
	}
	return p
}

func drain(r io.Reader) <-chan string {
	out := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(r)
		out <- string(b)
	}()
	return out
}

func TestEchoRoundTrip(t *testing.T) {
	forEachMode(t, func(t *testing.T, m ioMode) {
		p := launch(t, m.opts(launcher.ClientOptions{}), "echo")
		if p.Pid() <= 0 {
			t.Errorf("Pid = %d, want the child's pid", p.Pid())
		}
		r := bufio.NewReader(p)
		for _, line := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n", "second\n"} {
			if _, err := io.WriteString(p, line); err != nil {
				t.Fatalf("Write: %v", err)
			}
			got, err := r.ReadString('\n')
			if err != nil || got != line {
				t.Fatalf("read back %q, %v; want %q", got, err, line)
			}
		}
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := p.Wait(t.Context()); err != nil {
			t.Errorf("Wait after a clean exit: %v", err)
		}
		if n, err := r.ReadByte(); err != io.EOF {
			t.Errorf("Read after Close = %q, %v; want io.EOF", n, err)
		}
	})
}

func TestLargePayloadRoundTrip(t *testing.T) {
	forEachMode(t, func(t *testing.T, m ioMode) {
		p := launch(t, m.opts(launcher.ClientOptions{}), "echo")
		payload := make([]byte, 4<<20)
		_, _ = rand.Read(payload)
		got := make(chan []byte, 1)
		go func() {
			b, _ := io.ReadAll(p)
			got <- b
		}()
		if n, err := p.Write(payload); err != nil || n != len(payload) {
			t.Fatalf("Write = %d, %v", n, err)
		}
		if err := p.Stdin().Close(); err != nil {
			t.Fatalf("closing stdin: %v", err)
		}
		if b := <-got; !bytes.Equal(b, payload) {
			t.Fatalf("read back %d bytes, want the %d written (equal: false)", len(b), len(payload))
		}
		if err := p.Wait(t.Context()); err != nil {
			t.Errorf("Wait: %v", err)
		}
	})
}

func TestStdinCloseIsEOFInChild(t *testing.T) {
	forEachMode(t, func(t *testing.T, m ioMode) {
		p := launch(t, m.opts(launcher.ClientOptions{}), "count")
		out := drain(p)
		if _, err := io.WriteString(p, "12345"); err != nil {
			t.Fatal(err)
		}
		if err := p.Stdin().Close(); err != nil {
			t.Fatal(err)
		}
		if got, want := <-out, "read 5 bytes, then EOF\n"; got != want {
			t.Errorf("child said %q, want %q", got, want)
		}
		if _, err := p.Write([]byte("late")); !errors.Is(err, io.ErrClosedPipe) {
			t.Errorf("Write after closing stdin: %v, want io.ErrClosedPipe", err)
		}
		if err := p.Stdin().Close(); err != nil {
			t.Errorf("second stdin close: %v", err)
		}
	})
}

func TestExitStatusAndStderr(t *testing.T) {
	forEachMode(t, func(t *testing.T, m ioMode) {
		p := launch(t, m.opts(launcher.ClientOptions{}), "exit", "EXIT_CODE=3")
		stderr := drain(p.Stderr())
		out := drain(p)
		err := p.Wait(t.Context())
		var ee *launcher.ExitError
		if !errors.As(err, &ee) || ee.Code != 3 || ee.Signal != "" {
			t.Fatalf("Wait = %v, want exit status 3", err)
		}
		if got := <-stderr; got != "about to fail\n" {
			t.Errorf("stderr = %q", got)
		}
		if got := <-out; got != "" {
			t.Errorf("stdout = %q, want nothing", got)
		}
	})
}

func TestEarlyStderrIsKept(t *testing.T) {
	forEachMode(t, func(t *testing.T, m ioMode) {
		p := launch(t, m.opts(launcher.ClientOptions{}), "exit", "EXIT_CODE=1")
		out := drain(p) // the exit frame comes after stdout is consumed
		// The process has exited, and said why on stderr, before anyone asked
		// for its stderr.
		if err := p.Wait(t.Context()); err == nil {
			t.Fatal("Wait = nil, want exit status 1")
		}
		<-out
		if got := <-drain(p.Stderr()); got != "about to fail\n" {
			t.Errorf("stderr read after the exit = %q, want the early line", got)
		}
	})
}

func TestSpecReachesTheProcess(t *testing.T) {
	forEachMode(t, func(t *testing.T, m ioMode) {
		dir := t.TempDir()
		c := plugintest.LauncherWith(t, local{}, m.opts(launcher.ClientOptions{}))
		p, err := c.Launch(t.Context(), launcher.Spec{
			Server: "helper", Command: testExe(t), Dir: dir, Env: helperSpecEnv("env", "GREETING=hello there"),
		})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		want := "hello there\n" + dir + "\n"
		if got := <-drain(p); got != want {
			t.Errorf("child printed %q, want %q", got, want)
		}
	})
}

func TestKillEndsTheProcess(t *testing.T) {
	forEachMode(t, func(t *testing.T, m ioMode) {
		p := launch(t, m.opts(launcher.ClientOptions{}), "hang")
		r := bufio.NewReader(p)
		if line, err := r.ReadString('\n'); line != "ready\n" {
			t.Fatalf("child not ready: %q, %v", line, err)
		}
		if err := p.Kill(); err != nil {
			t.Fatal(err)
		}
		var ee *launcher.ExitError
		if err := p.Wait(t.Context()); !errors.As(err, &ee) || ee.Signal != "SIGKILL" {
			t.Errorf("Wait after Kill = %v, want killed by SIGKILL", err)
		}
		if err := p.Kill(); err != nil {
			t.Errorf("second Kill: %v", err)
		}
	})
}

func TestCloseEscalates(t *testing.T) {
	forEachMode(t, func(t *testing.T, m ioMode) {
		for _, tt := range []struct {
			mode, wantSignal string
		}{
			{"hang", "SIGTERM"},
			{"ignore-term", "SIGKILL"},
		} {
			t.Run(tt.mode, func(t *testing.T) {
				p := launch(t, m.opts(fastClose), tt.mode)
				if line, err := bufio.NewReader(p).ReadString('\n'); line != "ready\n" {
					t.Fatalf("child not ready: %q, %v", line, err)
				}
				if err := p.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
				var ee *launcher.ExitError
				if err := p.Wait(t.Context()); !errors.As(err, &ee) || ee.Signal != tt.wantSignal {
					t.Errorf("Wait = %v, want killed by %s", err, tt.wantSignal)
				}
			})
		}
	})
}

func TestCloseIsIdempotentAndConcurrent(t *testing.T) {
	forEachMode(t, func(t *testing.T, m ioMode) {
		p := launch(t, m.opts(launcher.ClientOptions{}), "echo")
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() { errs[i] = p.Close() })
		}
		wg.Wait()
		if diff := cmp.Diff(make([]error, 4), errs, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
			t.Errorf("Close results (-want +got):\n%s", diff)
		}
		if err := p.Close(); err != nil {
			t.Errorf("Close after Close: %v", err)
		}
		if _, err := p.Write([]byte("x\n")); err == nil {
			t.Error("Write after Close succeeded")
		}
		if _, err := p.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("Read after Close: %v, want io.EOF", err)
		}
	})
}

func TestCloseUnblocksPendingRead(t *testing.T) {
	forEachMode(t, func(t *testing.T, m ioMode) {
		p := launch(t, m.opts(launcher.ClientOptions{}), "echo")
		readErr := make(chan error, 1)
		go func() {
			_, err := p.Read(make([]byte, 10))
			readErr <- err
		}()
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-readErr; err != io.EOF {
			t.Errorf("pending Read returned %v, want io.EOF", err)
		}
	})
}

func TestConcurrentWriteAndRead(t *testing.T) {
	forEachMode(t, func(t *testing.T, m ioMode) {
		p := launch(t, m.opts(launcher.ClientOptions{}), "echo")
		const lines = 2000
		line := strings.Repeat("y", 200) + "\n"
		writeErr := make(chan error, 1)
		go func() {
			for range lines {
				if _, err := io.WriteString(p, line); err != nil {
					writeErr <- err
					return
				}
			}
			writeErr <- p.Stdin().Close()
		}()
		r := bufio.NewReader(p)
		for i := range lines {
			got, err := r.ReadString('\n')
			if err != nil || got != line {
				t.Fatalf("line %d: %q, %v", i, got, err)
			}
		}
		if err := <-writeErr; err != nil {
			t.Fatal(err)
		}
		if _, err := r.ReadByte(); err != io.EOF {
			t.Errorf("after stdin EOF the child should exit and stdout end; got %v", err)
		}
	})
}

func TestUnreadStderrDoesNotBlockStdout(t *testing.T) {
	forEachMode(t, func(t *testing.T, m ioMode) {
		p := launch(t, m.opts(launcher.ClientOptions{}), "noisy-stderr")
		if _, err := io.WriteString(p, "still here\n"); err != nil {
			t.Fatal(err)
		}
		if got, err := bufio.NewReader(p).ReadString('\n'); got != "still here\n" {
			t.Errorf("stdout = %q, %v", got, err)
		}
	})
}

func TestStartFailures(t *testing.T) {
	t.Run("command not found", func(t *testing.T) {
		c := plugintest.Launcher(t, local{})
		_, err := c.Launch(t.Context(), launcher.Spec{Server: "s", Command: "/nonexistent/mcp-server"})
		var se *launcher.StartError
		if !errors.As(err, &se) || se.Kind != launcher.KindNotFound || !errors.Is(err, launcher.ErrStart) {
			t.Fatalf("Launch = %v, want a not-found StartError", err)
		}
		if !strings.Contains(se.Message, "/nonexistent/mcp-server") {
			t.Errorf("message %q does not name the command", se.Message)
		}
	})
	t.Run("permission", func(t *testing.T) {
		notExecutable := t.TempDir() + "/server"
		if err := os.WriteFile(notExecutable, []byte("#!/bin/sh\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		c := plugintest.Launcher(t, local{})
		_, err := c.Launch(t.Context(), launcher.Spec{Server: "s", Command: notExecutable})
		var se *launcher.StartError
		if !errors.As(err, &se) || se.Kind != launcher.KindPermission {
			t.Fatalf("Launch = %v, want a permission StartError", err)
		}
	})
	t.Run("executor with stderr excerpt", func(t *testing.T) {
		want := &launcher.StartError{
			Kind:          launcher.KindExecutor,
			Message:       `ssh to "build-1" failed; check the host name and your ssh agent`,
			StderrExcerpt: "ssh: connect to host build-1 port 22: Connection refused\n",
		}
		c := plugintest.Launcher(t, startFunc(func(context.Context, launcher.Spec) (launcher.Process, error) {
			return nil, want
		}))
		_, err := c.Launch(t.Context(), launcher.Spec{Server: "s", Command: "x"})
		var se *launcher.StartError
		if !errors.As(err, &se) {
			t.Fatalf("Launch = %v, want a StartError", err)
		}
		if diff := cmp.Diff(want, se); diff != "" {
			t.Errorf("StartError (-want +got):\n%s", diff)
		}
	})
	t.Run("long stderr is cut", func(t *testing.T) {
		c := plugintest.Launcher(t, startFunc(func(context.Context, launcher.Spec) (launcher.Process, error) {
			return nil, &launcher.StartError{Kind: launcher.KindExecutor, StderrExcerpt: strings.Repeat("e", 1<<20)}
		}))
		_, err := c.Launch(t.Context(), launcher.Spec{Server: "s", Command: "x"})
		var se *launcher.StartError
		if !errors.As(err, &se) || len(se.StderrExcerpt) != launcher.MaxStderrExcerpt {
			t.Errorf("Launch = %v, want an excerpt of %d bytes", err, launcher.MaxStderrExcerpt)
		}
	})
}

func TestLaunchDeadlineReachesStart(t *testing.T) {
	startCtxErr := make(chan error, 1)
	c := plugintest.Launcher(t, startFunc(func(ctx context.Context, _ launcher.Spec) (launcher.Process, error) {
		<-ctx.Done()
		startCtxErr <- ctx.Err()
		return nil, ctx.Err()
	}))
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if _, err := c.Launch(ctx, launcher.Spec{Server: "s", Command: "x"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Launch = %v, want context.DeadlineExceeded", err)
	}
	if err := <-startCtxErr; !errors.Is(err, context.Canceled) {
		t.Errorf("the plugin's Start ctx ended with %v, want it cancelled", err)
	}
}

func TestProcessOutlivesLaunchContext(t *testing.T) {
	forEachMode(t, func(t *testing.T, m ioMode) {
		c := plugintest.LauncherWith(t, local{}, m.opts(launcher.ClientOptions{}))
		ctx, cancel := context.WithCancel(t.Context())
		p, err := c.Launch(ctx, launcher.Spec{Server: "s", Command: testExe(t), Env: helperSpecEnv("echo")})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		cancel()
		if _, err := io.WriteString(p, "alive\n"); err != nil {
			t.Fatal(err)
		}
		if got, err := bufio.NewReader(p).ReadString('\n'); got != "alive\n" {
			t.Errorf("after the launch ctx ended: %q, %v", got, err)
		}
	})
}

func TestInfo(t *testing.T) {
	info, err := plugintest.Launcher(t, local{}).Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.Kind != sdk.KindLauncher || !info.Has(launcher.CapabilityLaunch) || info.ConfigSchema != nil {
		t.Errorf("Info = %+v", info)
	}
}

// scriptedProcess writes its output, then blocks until signalled.
type scriptedProcess struct {
	stdout  io.Reader
	blocked chan struct{}
	once    sync.Once
}

func newScriptedProcess(out string) *scriptedProcess {
	blocked := make(chan struct{})
	return &scriptedProcess{stdout: io.MultiReader(strings.NewReader(out), blockingReader{blocked}), blocked: blocked}
}

func (p *scriptedProcess) Stdin() io.WriteCloser { return nopWriteCloser{} }
func (p *scriptedProcess) Stdout() io.Reader     { return p.stdout }
func (p *scriptedProcess) Stderr() io.Reader     { return blockingReader{p.blocked} }
func (p *scriptedProcess) Pid() int              { return 0 }
func (p *scriptedProcess) Signal(launcher.Signal) error {
	p.once.Do(func() { close(p.blocked) })
	return nil
}
func (p *scriptedProcess) Wait(ctx context.Context) error {
	select {
	case <-p.blocked:
	case <-ctx.Done():
	}
	return &launcher.ExitError{Code: -1, Signal: "SIGKILL"}
}

type nopWriteCloser struct{}

func (nopWriteCloser) Write(b []byte) (int, error) { return len(b), nil }
func (nopWriteCloser) Close() error                { return nil }

type blockingReader struct{ until chan struct{} }

func (r blockingReader) Read([]byte) (int, error) {
	<-r.until
	return 0, io.EOF
}

func TestPluginExitMidStream(t *testing.T) {
	proc := newScriptedProcess("partial output\n")
	conn, server := plugin.TestGRPCConn(t, func(s *grpc.Server) {
		impl := startFunc(func(context.Context, launcher.Spec) (launcher.Process, error) { return proc, nil })
		if err := (&launcher.GRPCPlugin{Impl: impl}).GRPCServer(nil, s); err != nil {
			t.Fatal(err)
		}
	})
	defer conn.Close()
	defer server.Stop()
	exited, markExited := context.WithCancel(context.Background())
	defer markExited()
	c := launcher.NewClient(conn, exited, fastClose)
	p, err := c.Launch(t.Context(), launcher.Spec{Server: "s", Command: "x"})
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(p)
	if line, err := r.ReadString('\n'); line != "partial output\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	// The plugin process dies: connections break, then go-plugin notices.
	server.Stop()
	markExited()
	if _, err := r.ReadByte(); !errors.Is(err, sdk.ErrPluginExited) {
		t.Errorf("Read after the plugin died: %v, want sdk.ErrPluginExited", err)
	}
	if err := p.Wait(t.Context()); !errors.Is(err, sdk.ErrPluginExited) {
		t.Errorf("Wait after the plugin died: %v, want sdk.ErrPluginExited", err)
	}
	if _, err := p.Write([]byte("x")); err == nil {
		t.Error("Write after the plugin died succeeded")
	}
	if err := p.Close(); !errors.Is(err, sdk.ErrPluginExited) {
		t.Errorf("Close after the plugin died: %v, want sdk.ErrPluginExited", err)
	}
}

func TestEnvConversions(t *testing.T) {
	spec := launcher.Spec{Env: launcher.EnvMap([]string{"B=2", "A=1", "B=3", "junk", "C=x=y"})}
	if diff := cmp.Diff([]string{"A=1", "B=3", "C=x=y"}, spec.Environ()); diff != "" {
		t.Errorf("Environ (-want +got):\n%s", diff)
	}
}

// wedgedProcess ignores stdin EOF and the signals the host asks for; only
// the SIGKILL the shim sends once the launch stream has ended kills it (as
// it would kill any real process).
type wedgedProcess struct {
	stream context.Context
	dead   chan struct{}
	stdout blockingReader

	mu      sync.Mutex
	signals []launcher.Signal
}

func (p *wedgedProcess) Stdin() io.WriteCloser { return nopWriteCloser{} }
func (p *wedgedProcess) Stdout() io.Reader     { return p.stdout }
func (p *wedgedProcess) Stderr() io.Reader     { return p.stdout }
func (p *wedgedProcess) Pid() int              { return 0 }

func (p *wedgedProcess) Signal(s launcher.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.signals = append(p.signals, s)
	if s == launcher.SignalKill && p.stream.Err() != nil && len(p.signals) == 3 {
		close(p.dead)
	}
	return nil
}

func (p *wedgedProcess) Wait(ctx context.Context) error {
	select {
	case <-p.dead:
		return &launcher.ExitError{Code: -1, Signal: "SIGKILL"}
	case <-ctx.Done():
		return ctx.Err()
	}
}

func TestCloseAbandonsAWedgedProcess(t *testing.T) {
	procs := make(chan *wedgedProcess, 1)
	c := plugintest.LauncherWith(t, startFunc(func(ctx context.Context, _ launcher.Spec) (launcher.Process, error) {
		dead := make(chan struct{})
		p := &wedgedProcess{stream: ctx, dead: dead, stdout: blockingReader{dead}}
		procs <- p
		return p, nil
	}), launcher.ClientOptions{StdinGrace: 50 * time.Millisecond, TermGrace: 50 * time.Millisecond, KillGrace: 50 * time.Millisecond})
	p, err := c.Launch(t.Context(), launcher.Spec{Server: "wedged", Command: "x"})
	if err != nil {
		t.Fatal(err)
	}
	proc := <-procs
	if err := p.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := p.Wait(t.Context()); err == nil {
		t.Error("Wait after abandoning the process returned nil")
	}
	<-proc.dead // the shim killed it once the stream ended
	proc.mu.Lock()
	defer proc.mu.Unlock()
	want := []launcher.Signal{launcher.SignalTerm, launcher.SignalKill, launcher.SignalKill}
	if diff := cmp.Diff(want, proc.signals); diff != "" {
		t.Errorf("signals the process got (-want +got):\n%s", diff)
	}
}

// stoppingProcess is a Stopper: it records the stop the host asked for,
// then exits. Any signal fails the test (the stop sequence is its own).
type stoppingProcess struct {
	*scriptedProcess
	stops   chan [2]time.Duration
	signals chan launcher.Signal
}

func (p *stoppingProcess) Stop(_ context.Context, stdinGrace, termGrace time.Duration) error {
	p.stops <- [2]time.Duration{stdinGrace, termGrace}
	p.once.Do(func() { close(p.blocked) })
	return nil
}

func (p *stoppingProcess) Signal(s launcher.Signal) error {
	p.signals <- s
	return p.scriptedProcess.Signal(s)
}

// TestCloseRunsThePluginsStop checks that Close hands the whole stop
// sequence, with the host's waits, to the plugin's process (StartCommand's
// runs internal/contain's Process.Stop), instead of sending its steps.
func TestCloseRunsThePluginsStop(t *testing.T) {
	proc := &stoppingProcess{scriptedProcess: newScriptedProcess(""), stops: make(chan [2]time.Duration, 1), signals: make(chan launcher.Signal, 3)}
	opts := launcher.ClientOptions{StdinGrace: 1234 * time.Millisecond, TermGrace: 567 * time.Millisecond, KillGrace: time.Minute}
	c := plugintest.LauncherWith(t, startFunc(func(context.Context, launcher.Spec) (launcher.Process, error) {
		return proc, nil
	}), opts)
	p, err := c.Launch(t.Context(), launcher.Spec{Server: "s", Command: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	select {
	case got := <-proc.stops:
		if want := [2]time.Duration{opts.StdinGrace, opts.TermGrace}; got != want {
			t.Errorf("Stop(stdinGrace, termGrace) = %v, want %v", got, want)
		}
	default:
		t.Error("the plugin's process was not asked to Stop")
	}
	select {
	case s := <-proc.signals:
		t.Errorf("the process got %v from the host; the stop sequence is the plugin's", s)
	default:
	}
}
