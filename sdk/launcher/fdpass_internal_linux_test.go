//go:build linux

package launcher

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/sdk/internal/pb/launcherv1"
)

// These tests break the descriptor hand-off on purpose (fdFaults), which
// only this package can do. The test binary's TestMain (launcher_test)
// runs the children: TOOLGATE_SDK_LAUNCHER_HELPER=echo copies stdin to
// stdout.

type localStarter struct{}

func (localStarter) Start(_ context.Context, spec Spec) (Process, error) {
	cmd := exec.Command(spec.Command, spec.Args...)
	cmd.Env = spec.Environ()
	return StartCommand(cmd)
}

func echoSpec(t *testing.T) Spec {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Spec{Server: "echo", Command: exe, Env: map[string]string{
		"TOOLGATE_SDK_LAUNCHER_HELPER": "echo", "GORACE": "atexit_sleep_ms=0",
	}}
}

// serveWithFaults serves the shim over a real gRPC connection with the
// given faults on each side and returns the host's client and the
// plugin's log.
func serveWithFaults(t *testing.T, pluginFaults, hostFaults fdFaults) (*Client, *testbin.Buffer) {
	t.Helper()
	logs := &testbin.Buffer{}
	log := hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Debug})
	conn, srv := plugin.TestGRPCConn(t, func(s *grpc.Server) {
		launcherv1.RegisterLauncherServiceServer(s, &server{impl: localStarter{}, log: log, faults: pluginFaults})
	})
	t.Cleanup(func() {
		_ = conn.Close()
		srv.Stop()
	})
	c := NewClient(conn, nil, ClientOptions{})
	c.faults = hostFaults
	return c, logs
}

// TestHandoffFailuresFallBackToTheStream: whatever breaks the hand-off,
// the process runs, in stream mode, and the plugin says why.
func TestHandoffFailuresFallBackToTheStream(t *testing.T) {
	otherUID := func(*net.UnixConn) (uint32, error) { return uint32(os.Getuid()) + 1, nil }
	for _, tt := range []struct {
		name              string
		plugin, host      fdFaults
		wantPluginLogHint string
	}{
		{"plugin does not offer", fdFaults{noOffer: true}, fdFaults{}, ""},
		{"host cannot reach the socket", fdFaults{}, fdFaults{socketPath: "/nonexistent/fds.sock"}, "the host did not connect"},
		{"nonce mismatch", fdFaults{}, fdFaults{wrongNonce: true}, errNonceMismatch.Error()},
		{"peer is another user", fdFaults{peerUID: otherUID}, fdFaults{}, "another user"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, logs := serveWithFaults(t, tt.plugin, tt.host)
			p, err := c.Launch(t.Context(), echoSpec(t))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if p.Mode() != ModeStream {
				t.Errorf("Mode = %v, want %v", p.Mode(), ModeStream)
			}
			if _, err := io.WriteString(p, "still works\n"); err != nil {
				t.Fatal(err)
			}
			if got, err := bufio.NewReader(p).ReadString('\n'); got != "still works\n" {
				t.Fatalf("echo = %q, %v", got, err)
			}
			if err := p.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if !strings.Contains(logs.String(), tt.wantPluginLogHint) {
				t.Errorf("plugin log does not say %q:\n%s", tt.wantPluginLogHint, logs.String())
			}
		})
	}
}

// startEcho starts an echo child with StartCommand and ends it with the
// test.
func startEcho(t *testing.T) Process {
	t.Helper()
	proc, err := localStarter{}.Start(t.Context(), echoSpec(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = proc.Signal(SignalKill)
		_ = proc.Wait(context.Background())
		_ = proc.Stdin().Close()
		closeIfCloser(proc.Stdout())
		closeIfCloser(proc.Stderr())
	})
	return proc
}

func echoes(t *testing.T, w io.Writer, r io.Reader) {
	t.Helper()
	if _, err := io.WriteString(w, "hello\n"); err != nil {
		t.Fatal(err)
	}
	if got, err := bufio.NewReader(r).ReadString('\n'); got != "hello\n" {
		t.Fatalf("echo = %q, %v", got, err)
	}
}

func TestOfferHandsOverWorkingPipes(t *testing.T) {
	proc := startEcho(t)
	o, err := newFDOffer(proc, fdFaults{})
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(o.dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("hand-off directory: %v, %v; want mode 0700", info.Mode(), err)
	}
	if len(o.nonce) < minFDNonceSize {
		t.Errorf("nonce of %d bytes, want at least %d", len(o.nonce), minFDNonceSize)
	}
	files, err := fetchFDs(t.Context(), o.pb(), fdFaults{})
	if err != nil {
		t.Fatal(err)
	}
	defer files.close()
	if sent, err := o.close(); !sent || err != nil {
		t.Errorf("offer: sent %v, %v; want sent", sent, err)
	}
	if _, err := os.Stat(o.dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("hand-off directory still there after the hand-off: %v", err)
	}
	// Close-on-exec: a copy of stdin's write end inherited by another child
	// of the host would keep this process from ever seeing EOF.
	_ = withRawFDs([]*os.File{files.stdin, files.stdout, files.stderr}, nil, func(fds []int) error {
		for i, fd := range fds {
			if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC == 0 {
				t.Errorf("received %s: flags %#x, %v; want close-on-exec", stdioNames[i], flags, err)
			}
		}
		return nil
	})
	echoes(t, files.stdin, files.stdout)
}

// TestOfferRefusesWrongNonce: a peer without the nonce gets nothing, the
// offer is spent (nobody can try again), and the plugin keeps working
// pipes.
func TestOfferRefusesWrongNonce(t *testing.T) {
	proc := startEcho(t)
	o, err := newFDOffer(proc, fdFaults{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fetchFDs(t.Context(), o.pb(), fdFaults{wrongNonce: true}); !errors.Is(err, errNoDescriptors) {
		t.Errorf("fetch with a wrong nonce: %v, want %v", err, errNoDescriptors)
	}
	if _, err := fetchFDs(t.Context(), o.pb(), fdFaults{}); err == nil || !errors.Is(err, syscall.ENOENT) {
		t.Errorf("second fetch, with the right nonce: %v, want the socket gone", err)
	}
	if sent, err := o.close(); sent || !errors.Is(err, errNonceMismatch) {
		t.Errorf("offer: sent %v, %v; want not sent, %v", sent, err, errNonceMismatch)
	}
	echoes(t, proc.Stdin(), proc.Stdout())
}

// fakeOffer listens like a plugin's offer but sends whatever files the
// test gives it; wait returns once it has served its one connection.
func fakeOffer(t *testing.T, send []*os.File) (offer *launcherv1.FdOffer, wait func()) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fds.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	nonce := bytes.Repeat([]byte{7}, fdNonceSize)
	served := make(chan struct{})
	go func() {
		defer close(served)
		conn, err := ln.AcceptUnix()
		if err != nil {
			return
		}
		defer conn.Close()
		if _, err := io.ReadFull(conn, make([]byte, len(nonce))); err != nil {
			return
		}
		_ = withRawFDs(send, nil, func(fds []int) error {
			_, _, err := conn.WriteMsgUnix([]byte{1}, unix.UnixRights(fds...), nil)
			return err
		})
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-served
	})
	return &launcherv1.FdOffer{SocketPath: path, Nonce: nonce}, func() { <-served }
}

func countFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// TestHostRefusesWrongDescriptors: the host takes only three pipes in the
// right directions, and closes anything else it was sent.
func TestHostRefusesWrongDescriptors(t *testing.T) {
	pipe := func() (r, w *os.File) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close(); _ = w.Close() })
		return r, w
	}
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = devNull.Close() })
	inR, inW := pipe()
	outR, _ := pipe()
	errR, _ := pipe()
	for _, tt := range []struct {
		name string
		send []*os.File
	}{
		{"two descriptors", []*os.File{inW, outR}},
		{"four descriptors", []*os.File{inW, outR, errR, errR}},
		{"not a pipe", []*os.File{inW, outR, devNull}},
		{"stdin is the read end", []*os.File{inR, outR, errR}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			offer, served := fakeOffer(t, tt.send)
			before := countFDs(t) // the fake's listener is open; its connection is not yet
			if _, err := fetchFDs(t.Context(), offer, fdFaults{}); !errors.Is(err, errBadDescriptors) {
				t.Errorf("fetch: %v, want %v", err, errBadDescriptors)
			}
			served()
			if after := countFDs(t); after != before {
				t.Errorf("open descriptors: %d before the refused fetch, %d after", before, after)
			}
		})
	}
	if _, err := fetchFDs(t.Context(), &launcherv1.FdOffer{SocketPath: "/x", Nonce: []byte("short")}, fdFaults{}); err == nil {
		t.Error("fetch accepted an offer with a 5-byte nonce")
	}
}

// rawStream opens a launch stream to the shim without the SDK's client:
// the host's side of the wire as any host (old or new) speaks it.
func rawStream(t *testing.T) launcherv1.LauncherService_LaunchClient {
	t.Helper()
	conn, srv := plugin.TestGRPCConn(t, func(s *grpc.Server) {
		launcherv1.RegisterLauncherServiceServer(s, &server{impl: localStarter{}, log: hclog.NewNullLogger()})
	})
	t.Cleanup(func() {
		_ = conn.Close()
		srv.Stop()
	})
	stream, err := launcherv1.NewLauncherServiceClient(conn).Launch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return stream
}

func startFrame(spec Spec, acceptFDs bool) *launcherv1.LaunchClientFrame {
	return &launcherv1.LaunchClientFrame{Frame: &launcherv1.LaunchClientFrame_Start{Start: &launcherv1.StartSpec{
		Server: spec.Server, Command: spec.Command, Env: spec.Env, AcceptFds: acceptFDs,
	}}}
}

// TestOldHostGetsChunks: a host that does not set accept_fds (every host
// before it existed) gets no offer and the output in frames.
func TestOldHostGetsChunks(t *testing.T) {
	stream := rawStream(t)
	if err := stream.Send(startFrame(echoSpec(t), false)); err != nil {
		t.Fatal(err)
	}
	first, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if first.GetStarted() == nil || first.GetStarted().GetFdOffer() != nil {
		t.Fatalf("first frame = %v, want started without an offer", first)
	}
	for _, f := range []*launcherv1.LaunchClientFrame{
		{Frame: &launcherv1.LaunchClientFrame_Stdin{Stdin: []byte("chunk\n")}},
		{Frame: &launcherv1.LaunchClientFrame_CloseStdin{CloseStdin: &launcherv1.CloseStdin{}}},
	} {
		if err := stream.Send(f); err != nil {
			t.Fatal(err)
		}
	}
	var stdout []byte
	for {
		f, err := stream.Recv()
		if err != nil {
			t.Fatalf("stream ended before the exit: %v", err)
		}
		stdout = append(stdout, f.GetStdout()...)
		if exit := f.GetExit(); exit != nil {
			if exit.GetCode() != 0 {
				t.Errorf("exit = %v", exit)
			}
			break
		}
	}
	if string(stdout) != "chunk\n" {
		t.Errorf("stdout frames carried %q, want %q", stdout, "chunk\n")
	}
}

// TestHostMustSettleTheOffer: after an offer the plugin takes nothing but
// fd_handoff, and a host that claims descriptors it never fetched ends the
// stream (and the process) instead of leaving nobody reading it.
func TestHostMustSettleTheOffer(t *testing.T) {
	for _, tt := range []struct {
		name string
		next *launcherv1.LaunchClientFrame
	}{
		{"stdin before the hand-off", &launcherv1.LaunchClientFrame{Frame: &launcherv1.LaunchClientFrame_Stdin{Stdin: []byte("x")}}},
		{"taken without fetching", &launcherv1.LaunchClientFrame{Frame: &launcherv1.LaunchClientFrame_FdHandoff{FdHandoff: &launcherv1.FdHandoff{Taken: true}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stream := rawStream(t)
			if err := stream.Send(startFrame(echoSpec(t), true)); err != nil {
				t.Fatal(err)
			}
			first, err := stream.Recv()
			if err != nil {
				t.Fatal(err)
			}
			if first.GetStarted().GetFdOffer() == nil {
				t.Fatalf("first frame = %v, want started with an offer", first)
			}
			if err := stream.Send(tt.next); err != nil {
				t.Fatal(err)
			}
			_, err = stream.Recv()
			if status.Code(err) != codes.InvalidArgument {
				t.Errorf("after %s the stream ended with %v, want InvalidArgument", tt.name, err)
			}
			pid := int(first.GetStarted().GetPid())
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("process %d still exists after the stream ended: %v", pid, err)
			}
		})
	}
}

// offeringServer is a plugin that offers descriptors even to a host that
// did not ask, then reports an exit; it records the host's answer.
type offeringServer struct {
	launcherv1.UnimplementedLauncherServiceServer
	answer chan *launcherv1.LaunchClientFrame
}

func (s *offeringServer) Launch(stream launcherv1.LauncherService_LaunchServer) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	err := stream.Send(&launcherv1.LaunchServerFrame{Frame: &launcherv1.LaunchServerFrame_Started{Started: &launcherv1.Started{
		Pid: 1, FdOffer: &launcherv1.FdOffer{SocketPath: "/nonexistent/fds.sock", Nonce: make([]byte, fdNonceSize)},
	}}})
	if err != nil {
		return err
	}
	answer, err := stream.Recv()
	if err != nil {
		return err
	}
	s.answer <- answer
	return stream.Send(&launcherv1.LaunchServerFrame{Frame: &launcherv1.LaunchServerFrame_Exit{Exit: &launcherv1.Exit{}}})
}

// TestUnaskedOfferIsDeclined: a host that did not ask never takes
// descriptors, whatever the plugin offers.
func TestUnaskedOfferIsDeclined(t *testing.T) {
	fake := &offeringServer{answer: make(chan *launcherv1.LaunchClientFrame, 1)}
	conn, srv := plugin.TestGRPCConn(t, func(s *grpc.Server) { launcherv1.RegisterLauncherServiceServer(s, fake) })
	t.Cleanup(func() {
		_ = conn.Close()
		srv.Stop()
	})
	p, err := NewClient(conn, nil, ClientOptions{StreamOnly: true}).Launch(t.Context(), Spec{Server: "s", Command: "x"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Mode() != ModeStream {
		t.Errorf("Mode = %v, want %v", p.Mode(), ModeStream)
	}
	if h := (<-fake.answer).GetFdHandoff(); h == nil || h.GetTaken() {
		t.Errorf("host answered %v, want fd_handoff not taken", h)
	}
	if err := p.Wait(t.Context()); err != nil {
		t.Errorf("Wait: %v", err)
	}
}
