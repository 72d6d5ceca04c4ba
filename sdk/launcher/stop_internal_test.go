package launcher

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/toolgate/toolgate/internal/testwait"
	"github.com/toolgate/toolgate/sdk/internal/pb/launcherv1"
)

// graceRecorder is a Stopper that records the waits it was given and
// then exits.
type graceRecorder struct {
	stops chan [2]time.Duration
	dead  chan struct{}
}

func (p *graceRecorder) Stdin() io.WriteCloser { return nopStdin{} }
func (p *graceRecorder) Stdout() io.Reader     { return strings.NewReader("") }
func (p *graceRecorder) Stderr() io.Reader     { return strings.NewReader("") }
func (p *graceRecorder) Pid() int              { return 0 }
func (p *graceRecorder) Signal(Signal) error   { return nil }
func (p *graceRecorder) Wait(ctx context.Context) error {
	select {
	case <-p.dead:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *graceRecorder) Stop(_ context.Context, stdinGrace, termGrace time.Duration) error {
	p.stops <- [2]time.Duration{stdinGrace, termGrace}
	close(p.dead)
	return nil
}

type nopStdin struct{}

func (nopStdin) Write(b []byte) (int, error) { return len(b), nil }
func (nopStdin) Close() error                { return nil }

type startFn func(context.Context, Spec) (Process, error)

func (f startFn) Start(ctx context.Context, s Spec) (Process, error) { return f(ctx, s) }

// TestStopWithoutWaitsUsesTheDefaults drives the shim as a host that
// sends a stop frame without waits: the process gets the documented
// defaults.
func TestStopWithoutWaitsUsesTheDefaults(t *testing.T) {
	proc := &graceRecorder{stops: make(chan [2]time.Duration, 1), dead: make(chan struct{})}
	conn, server := plugin.TestGRPCConn(t, func(s *grpc.Server) {
		impl := startFn(func(context.Context, Spec) (Process, error) { return proc, nil })
		if err := (&GRPCPlugin{Impl: impl}).GRPCServer(nil, s); err != nil {
			t.Fatal(err)
		}
	})
	defer conn.Close()
	defer server.Stop()
	stream, err := launcherv1.NewLauncherServiceClient(conn).Launch(testwait.Context(t))
	if err != nil {
		t.Fatal(err)
	}
	send := func(f *launcherv1.LaunchClientFrame) {
		t.Helper()
		if err := stream.Send(f); err != nil {
			t.Fatal(err)
		}
	}
	send(&launcherv1.LaunchClientFrame{Frame: &launcherv1.LaunchClientFrame_Start{Start: &launcherv1.StartSpec{Server: "s", Command: "x"}}})
	if f, err := stream.Recv(); err != nil || f.GetStarted() == nil {
		t.Fatalf("first frame %v, %v; want started", f, err)
	}
	send(&launcherv1.LaunchClientFrame{Frame: &launcherv1.LaunchClientFrame_Stop{Stop: &launcherv1.Stop{}}})
	for {
		f, err := stream.Recv()
		if err != nil {
			t.Fatalf("stream ended before the exit frame (or timed out): %v", err)
		}
		if f.GetExit() != nil {
			break
		}
	}
	if got, want := testwait.Recv(t, proc.stops, "the process's Stop"), [2]time.Duration{DefaultStdinGrace, DefaultTermGrace}; got != want {
		t.Errorf("Stop(stdinGrace, termGrace) = %v, want the defaults %v", got, want)
	}
}

// oldLauncher is a plugin that predates the stop frame: it applies
// close_stdin and ignores what it does not know, so its process would run
// until the host abandons the stream.
type oldLauncher struct {
	launcherv1.UnimplementedLauncherServiceServer
	frames    chan string
	abandoned chan struct{}
}

func (o *oldLauncher) Launch(stream launcherv1.LauncherService_LaunchServer) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	if err := stream.Send(&launcherv1.LaunchServerFrame{Frame: &launcherv1.LaunchServerFrame_Started{Started: &launcherv1.Started{}}}); err != nil {
		return err
	}
	for {
		f, err := stream.Recv()
		if err != nil {
			close(o.abandoned) // the real shim kills the process here
			return nil
		}
		switch f.GetFrame().(type) {
		case *launcherv1.LaunchClientFrame_CloseStdin:
			o.frames <- "close_stdin"
		case *launcherv1.LaunchClientFrame_Signal:
			o.frames <- "signal"
		}
	}
}

// TestCloseStopsAnOldPlugin checks that a plugin that ignores the stop
// frame still stops its process: it gets the EOF, and Close abandons the
// stream (on which a plugin kills the process) once the graces and the
// margin have passed.
func TestCloseStopsAnOldPlugin(t *testing.T) {
	old := &oldLauncher{frames: make(chan string, 4), abandoned: make(chan struct{})}
	conn, server := plugin.TestGRPCConn(t, func(s *grpc.Server) { launcherv1.RegisterLauncherServiceServer(s, old) })
	defer conn.Close()
	defer server.Stop()
	c := NewClient(conn, nil, ClientOptions{StdinGrace: 50 * time.Millisecond, TermGrace: 50 * time.Millisecond, KillGrace: 50 * time.Millisecond})
	p, err := c.Launch(t.Context(), Spec{Server: "s", Command: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	testwait.RecvOK(t, old.abandoned, "the old plugin's stream to be abandoned")
	if got := testwait.Recv(t, old.frames, "the old plugin's first control frame"); got != "close_stdin" {
		t.Errorf("the old plugin first got %s, want close_stdin", got)
	}
	if err := p.Wait(t.Context()); err == nil {
		t.Error("Wait after abandoning the process returned nil")
	}
}
