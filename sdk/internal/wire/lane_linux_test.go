package wire

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/internal/pb/pluginv1"
)

// echoConfig answers Configure with one warning whose summary is the
// config it got, after gate (if set) lets it.
type echoConfig struct {
	gate func(ctx context.Context, key string)
}

func (echoConfig) ConfigSchema() sdk.ConfigSchema { return sdk.ConfigSchema{} }

func (e echoConfig) Configure(ctx context.Context, config json.RawMessage) []sdk.Diagnostic {
	var key string
	_ = json.Unmarshal(config, &key)
	if e.gate != nil {
		e.gate(ctx, key)
	}
	return []sdk.Diagnostic{{Severity: sdk.SeverityWarning, Summary: key}}
}

// offerLane serves PluginService with impl and offers a lane, as a
// plugin would.
func offerLane(t *testing.T, impl any) (*LaneServer, *pluginv1.OpenLaneResponse) {
	t.Helper()
	t.Setenv(plugin.EnvUnixSocketDir, t.TempDir())
	ls := NewLaneServer(&pluginv1.PluginService_ServiceDesc, &PluginServer{Kind: sdk.KindHook, Impl: impl}, nil)
	t.Cleanup(ls.Close)
	offer, err := ls.Offer()
	if err != nil {
		t.Fatal(err)
	}
	return ls, offer
}

// openLane offers a lane as offerLane does and opens it, as the host
// would.
func openLane(t *testing.T, impl any) (*Lane, *LaneServer) {
	t.Helper()
	ls, offer := offerLane(t, impl)
	lane, err := dialLane(t.Context(), offer, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lane.Close() })
	return lane, ls
}

// configure calls Configure over conn with key and returns the summary
// the plugin echoed.
func configure(ctx context.Context, conn grpc.ClientConnInterface, key string) (string, error) {
	config, _ := json.Marshal(key)
	resp, err := pluginv1.NewPluginServiceClient(conn).Configure(ctx, &pluginv1.ConfigureRequest{ConfigJson: config})
	if err != nil {
		return "", err
	}
	if len(resp.GetDiagnostics()) != 1 {
		return "", fmt.Errorf("got %d diagnostics", len(resp.GetDiagnostics()))
	}
	return resp.GetDiagnostics()[0].GetSummary(), nil
}

func TestLaneCallersGetTheirOwnAnswers(t *testing.T) {
	lane, _ := openLane(t, echoConfig{})
	concurrently(t, 16, 50, func(g, i int) error {
		key := strconv.Itoa(g) + "/" + strconv.Itoa(i)
		if got, err := configure(t.Context(), lane, key); err != nil || got != key {
			return fmt.Errorf("call %s: got %q, %v", key, got, err)
		}
		return nil
	})
}

// concurrently runs call(g, i) for i < calls on each of callers
// goroutines; a caller stops at its first error, which fails the test.
func concurrently(t *testing.T, callers, calls int, call func(g, i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for g := range callers {
		wg.Go(func() {
			for i := range calls {
				if err := call(g, i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// gated makes Configure wait for the keys it was made with until each is
// released (or its ctx ends), and reports each when it arrives and how
// its ctx ended. Other keys pass.
type gated struct {
	release  map[string]chan struct{}
	arrived  chan string
	ctxEnded chan error
}

func newGated(keys ...string) *gated {
	g := &gated{release: map[string]chan struct{}{}, arrived: make(chan string, len(keys)), ctxEnded: make(chan error, len(keys))}
	for _, k := range keys {
		g.release[k] = make(chan struct{})
	}
	return g
}

func (g *gated) wait(ctx context.Context, key string) {
	release, ok := g.release[key]
	if !ok { // not gated
		return
	}
	g.arrived <- key
	select {
	case <-release:
	case <-ctx.Done():
		g.ctxEnded <- ctx.Err()
	}
}

func TestLaneSlowCallHoldsUpNoOther(t *testing.T) {
	g := newGated("slow")
	lane, _ := openLane(t, echoConfig{gate: g.wait})
	slow := make(chan error, 1)
	go func() {
		_, err := configure(t.Context(), lane, "slow")
		slow <- err
	}()
	<-g.arrived
	// The slow caller may be the one reading: the others' answers must
	// still reach them.
	for i := range 20 {
		key := "fast" + strconv.Itoa(i)
		if got, err := configure(t.Context(), lane, key); err != nil || got != key {
			t.Fatalf("got %q, %v; want %q", got, err, key)
		}
	}
	close(g.release["slow"])
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
}

func TestLaneCancelledCallerHandsOnTheReading(t *testing.T) {
	// Whichever of two waiting callers reads the socket, cancelling one
	// must not strand the other.
	for _, cancelled := range []string{"a", "b"} {
		t.Run("cancel "+cancelled, func(t *testing.T) {
			g := newGated("a", "b")
			lane, _ := openLane(t, echoConfig{gate: g.wait})
			ctxs := map[string]context.Context{"a": t.Context(), "b": t.Context()}
			ctx, cancel := context.WithCancel(t.Context())
			ctxs[cancelled] = ctx
			results := map[string]chan error{"a": make(chan error, 1), "b": make(chan error, 1)}
			for _, key := range []string{"a", "b"} {
				go func() {
					_, err := configure(ctxs[key], lane, key)
					results[key] <- err
				}()
				<-g.arrived
			}
			cancel()
			if err := <-results[cancelled]; status.Code(err) != codes.Canceled {
				t.Errorf("cancelled call: got %v, want CANCELLED", err)
			}
			if err := <-g.ctxEnded; !errors.Is(err, context.Canceled) {
				t.Errorf("the plugin's call ended with %v, want context.Canceled", err)
			}
			other := "b"
			if cancelled == "b" {
				other = "a"
			}
			close(g.release[other])
			if err := <-results[other]; err != nil {
				t.Errorf("the other call: %v", err)
			}
		})
	}
}

func TestLaneSocketMustBeThePluginProcesss(t *testing.T) {
	_, offer := offerLane(t, nil)
	lane, err := dialLane(t.Context(), offer, os.Getpid()+1)
	if err == nil {
		_ = lane.Close()
		t.Fatal("a socket of another process opened the lane")
	}
	if want := fmt.Sprintf("belongs to pid %d, not to the plugin (pid %d)", os.Getpid(), os.Getpid()+1); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q lacks %q", err, want)
	}
}

func TestLaneBreakFailsCallsAndFallsBackToGRPC(t *testing.T) {
	g := newGated("stuck")
	lane, ls := openLane(t, echoConfig{gate: g.wait})
	pc := NewPluginClient(recordingConn{}, nil, sdk.KindHook)
	conn := pc.conn
	conn.lane.Store(lane)
	if !pc.LaneOpen() {
		t.Fatal("LaneOpen = false with a lane open")
	}
	inFlight := make(chan error, 1)
	go func() {
		_, err := configure(t.Context(), conn, "stuck")
		inFlight <- err
	}()
	<-g.arrived
	ls.Close() // the plugin's side goes away
	if err := <-inFlight; status.Code(err) != codes.Unavailable {
		t.Errorf("call in flight: got %v, want UNAVAILABLE", err)
	}
	<-lane.Done()
	if _, err := configure(t.Context(), lane, "after"); status.Code(err) != codes.Unavailable {
		t.Errorf("call on the broken lane: got %v, want UNAVAILABLE", err)
	}
	if pc.LaneOpen() {
		t.Error("LaneOpen = true after the lane broke")
	}
	if _, err := configure(t.Context(), conn, "after"); !errors.Is(err, errReachedGRPC) {
		t.Errorf("call through the kind's connection: got %v, want it sent over gRPC", err)
	}
}

// TestLaneManyCallersUnderDeadlines has callers come and go with short
// deadlines, so that whoever reads the socket is often cancelled while
// others wait: every call must end, on time, with its own answer or its
// context's error, and the lane must keep working.
func TestLaneManyCallersUnderDeadlines(t *testing.T) {
	lane, _ := openLane(t, echoConfig{gate: func(ctx context.Context, key string) {
		// Answer some calls at once and hold others until their
		// deadline, by the key's last digit.
		if key[len(key)-1]%3 == 0 {
			<-ctx.Done()
		}
	}})
	concurrently(t, 32, 100, func(g, i int) error {
		key := strconv.Itoa(g) + "/" + strconv.Itoa(i)
		timeout := time.Duration(50+(g*7+i*13)%400) * time.Microsecond
		ctx, cancel := context.WithTimeout(t.Context(), timeout)
		got, err := configure(ctx, lane, key)
		cancel()
		switch {
		case err == nil && got == key:
		case err != nil && (status.Code(err) == codes.DeadlineExceeded || status.Code(err) == codes.Canceled):
		default:
			return fmt.Errorf("call %s: got %q, %v", key, got, err)
		}
		return nil
	})
	if got, err := configure(t.Context(), lane, "after1"); err != nil || got != "after1" {
		t.Errorf("after the storm: got %q, %v", got, err)
	}
}

var errReachedGRPC = status.Error(codes.Aborted, "reached gRPC")

// recordingConn stands for the gRPC connection: it fails every call with
// errReachedGRPC.
type recordingConn struct{}

func (recordingConn) Invoke(context.Context, string, any, any, ...grpc.CallOption) error {
	return errReachedGRPC
}

func (recordingConn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, errReachedGRPC
}

func TestLaneRefusesAWrongNonceAndOffersOnce(t *testing.T) {
	_, offer := offerLane(t, nil)
	wrong := &pluginv1.OpenLaneResponse{SocketPath: offer.GetSocketPath(), Nonce: bytes.Repeat([]byte{7}, laneNonceSize)}
	if lane, err := dialLane(t.Context(), wrong, 0); err == nil {
		_ = lane.Close()
		t.Fatal("a wrong nonce opened the lane")
	}
	if lane, err := dialLane(t.Context(), offer, 0); err == nil {
		_ = lane.Close()
		t.Fatal("an offer was taken twice")
	}
	if _, err := os.Stat(offer.GetSocketPath()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the offer's socket is still there: %v", err)
	}
	short := &pluginv1.OpenLaneResponse{SocketPath: offer.GetSocketPath(), Nonce: []byte{1, 2, 3}}
	if _, err := dialLane(t.Context(), short, 0); !errors.Is(err, sdk.ErrBadResponse) {
		t.Errorf("a short nonce: got %v, want sdk.ErrBadResponse", err)
	}
}

func TestLaneUnknownMethodIsUnimplemented(t *testing.T) {
	lane, _ := openLane(t, echoConfig{})
	err := lane.Invoke(t.Context(), "/toolgate.hook.v1.HookService/Nope", &pluginv1.InfoRequest{}, &pluginv1.InfoResponse{})
	if status.Code(err) != codes.Unimplemented {
		t.Errorf("got %v, want UNIMPLEMENTED", err)
	}
	// The lane still works.
	if got, err := configure(t.Context(), lane, "still"); err != nil || got != "still" {
		t.Errorf("after: got %q, %v", got, err)
	}
}

// chunkReader returns its chunks one Read at a time; a nil chunk is a
// deadline error.
type chunkReader struct{ chunks [][]byte }

func (r *chunkReader) Read(b []byte) (int, error) {
	if len(r.chunks) == 0 {
		return 0, io.EOF
	}
	c := r.chunks[0]
	r.chunks = r.chunks[1:]
	if c == nil {
		return 0, os.ErrDeadlineExceeded
	}
	return copy(b, c), nil
}

func TestFrameReaderKeepsAFrameAcrossADeadline(t *testing.T) {
	frame := func(id uint64, message string) []byte {
		b, _ := proto.Marshal(&pluginv1.LaneResponse{Id: id, Message: message})
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
	}
	big := string(bytes.Repeat([]byte("x"), 3*laneBuffer)) // larger than the buffer
	one, two := frame(1, "first"), frame(2, big)
	stream := append(append([]byte{}, one...), two...)
	cut1, cut2 := 2, len(one)+10 // inside the first prefix, inside the second frame
	r := newFrameReader(&chunkReader{chunks: [][]byte{stream[:cut1], nil, stream[cut1:cut2], nil, nil, stream[cut2:]}})
	var got []*pluginv1.LaneResponse
	for {
		resp := &pluginv1.LaneResponse{}
		err := r.next(resp)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			continue
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, resp)
	}
	if len(got) != 2 || got[0].GetId() != 1 || got[0].GetMessage() != "first" || got[1].GetId() != 2 || got[1].GetMessage() != big {
		t.Errorf("got %d frames: %v", len(got), got)
	}

	r = newFrameReader(&chunkReader{chunks: [][]byte{one[:len(one)-1]}})
	if err := r.next(&pluginv1.LaneResponse{}); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a cut frame: got %v, want io.ErrUnexpectedEOF", err)
	}
}
