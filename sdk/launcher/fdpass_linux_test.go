//go:build linux

package launcher_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/launcher"
	"github.com/toolgate/toolgate/sdk/plugintest"
)

// hiddenPipes is a process whose stdio are pipes the Process does not
// expose as *os.File (a launcher that wraps its I/O): it cannot be passed.
type hiddenPipes struct{ launcher.Process }

type onlyWriteCloser struct{ io.WriteCloser }
type onlyReader struct{ io.Reader }

func (p hiddenPipes) Stdin() io.WriteCloser { return onlyWriteCloser{p.Process.Stdin()} }
func (p hiddenPipes) Stdout() io.Reader     { return onlyReader{p.Process.Stdout()} }

// stderrToFile is a process whose stderr is a regular file: an *os.File,
// but not a pipe.
type stderrToFile struct {
	launcher.Process
	file *os.File
}

func (p stderrToFile) Stderr() io.Reader { return p.file }

func TestIOModeNegotiation(t *testing.T) {
	wrap := func(w func(launcher.Process) launcher.Process) launcher.Launcher {
		return startFunc(func(ctx context.Context, spec launcher.Spec) (launcher.Process, error) {
			p, err := local{}.Start(ctx, spec)
			if err != nil {
				return nil, err
			}
			return w(p), nil
		})
	}
	for _, tt := range []struct {
		name       string
		impl       launcher.Launcher
		streamOnly bool
		want       launcher.IOMode
	}{
		{"both sides can", local{}, false, launcher.ModePassedFDs},
		{"host does not ask", local{}, true, launcher.ModeStream},
		{"process hides its pipes", wrap(func(p launcher.Process) launcher.Process { return hiddenPipes{p} }), false, launcher.ModeStream},
		{"stderr is not a pipe", wrap(func(p launcher.Process) launcher.Process {
			f, err := os.Open(os.DevNull)
			if err != nil {
				t.Fatal(err)
			}
			return stderrToFile{p, f}
		}), false, launcher.ModeStream},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := plugintest.LauncherWith(t, tt.impl, launcher.ClientOptions{StreamOnly: tt.streamOnly})
			p, err := c.Launch(t.Context(), launcher.Spec{Server: "s", Command: testExe(t), Env: helperSpecEnv("echo")})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if p.Mode() != tt.want {
				t.Errorf("Mode = %v, want %v", p.Mode(), tt.want)
			}
			if _, err := io.WriteString(p, "ping\n"); err != nil {
				t.Fatal(err)
			}
			if got, err := bufio.NewReader(p).ReadString('\n'); got != "ping\n" {
				t.Fatalf("echo = %q, %v", got, err)
			}
			if err := p.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if err := p.Wait(t.Context()); err != nil {
				t.Errorf("Wait: %v", err)
			}
		})
	}
}

func TestInfoAdvertisesPassFDs(t *testing.T) {
	info, err := plugintest.Launcher(t, local{}).Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !info.Has(launcher.CapabilityPassFDs) {
		t.Errorf("Info capabilities = %v, want %q among them", info.Capabilities, launcher.CapabilityPassFDs)
	}
}

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// TestNoDescriptorLeaks: a Launch and Close cycle, host and plugin both
// in this process, leaves as many descriptors open as before.
func TestNoDescriptorLeaks(t *testing.T) {
	forEachMode(t, func(t *testing.T, m ioMode) {
		c := plugintest.LauncherWith(t, local{}, m.opts(launcher.ClientOptions{}))
		cycle := func() {
			p, err := c.Launch(t.Context(), launcher.Spec{Server: "s", Command: testExe(t), Env: helperSpecEnv("noisy-stderr")})
			if err != nil {
				t.Fatal(err)
			}
			if p.Mode() != m.want() {
				t.Fatalf("Mode = %v, want %v", p.Mode(), m.want())
			}
			stderr := drain(p.Stderr())
			if _, err := io.WriteString(p, "x\n"); err != nil {
				t.Fatal(err)
			}
			if got, err := bufio.NewReader(p).ReadString('\n'); got != "x\n" {
				t.Fatalf("echo = %q, %v", got, err)
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			<-stderr
		}
		cycle() // the connection's own descriptors open on first use
		before := openFDs(t)
		for range 3 {
			cycle()
		}
		if after := openFDs(t); after != before {
			t.Errorf("open descriptors: %d before three Launch+Close cycles, %d after", before, after)
		}
	})
}

// TestPluginKilledWithPassedPipes: a real plugin process that passed its
// child's pipes is killed with SIGKILL. The host's pending read fails with
// sdk.ErrPluginExited (the stream still says what happened), and the child
// does not outlive the plugin even though the host holds its pipes.
func TestPluginKilledWithPassedPipes(t *testing.T) {
	b, err := plugintest.StartBinary(t, testExe(t), sdk.KindLauncher, plugintest.BinaryOptions{
		Env:      []string{helperEnv + "=plugin", "GORACE=atexit_sleep_ms=0"},
		Launcher: fastClose,
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.Plugin.(*launcher.Client).Launch(t.Context(), launcher.Spec{
		Server: "doomed", Command: testExe(t), Env: helperSpecEnv("hang"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode() != launcher.ModePassedFDs {
		t.Fatalf("Mode = %v, want %v", p.Mode(), launcher.ModePassedFDs)
	}
	r := bufio.NewReader(p)
	if line, err := r.ReadString('\n'); line != "ready\n" {
		t.Fatalf("child not ready: %q, %v", line, err)
	}
	child := p.Pid()
	readErr := make(chan error, 1)
	go func() {
		_, err := r.ReadByte()
		readErr <- err
	}()

	if err := syscall.Kill(b.Client.ReattachConfig().Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-readErr:
		if !errors.Is(err, sdk.ErrPluginExited) {
			t.Errorf("pending Read after the plugin was killed: %v, want sdk.ErrPluginExited", err)
		}
	case <-time.After(30 * time.Second): // a hang guard, not a timing check
		t.Fatal("pending Read still blocked 30s after the plugin was killed")
	}
	if err := p.Wait(t.Context()); !errors.Is(err, sdk.ErrPluginExited) {
		t.Errorf("Wait: %v, want sdk.ErrPluginExited", err)
	}
	if _, err := p.Write([]byte("x\n")); err == nil {
		t.Error("Write after the plugin died succeeded")
	}
	if err := p.Close(); !errors.Is(err, sdk.ErrPluginExited) {
		t.Errorf("Close: %v, want sdk.ErrPluginExited", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := procwatch.WaitGone(ctx, child); err != nil {
		_ = syscall.Kill(child, syscall.SIGKILL)
		t.Fatalf("after its launcher plugin was killed: %v", err)
	}
}
