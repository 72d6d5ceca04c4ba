package wire

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/toolgate/toolgate/sdk/internal/pb/pluginv1"
)

// The direct lane carries a kind service's unary calls over a plain unix
// socket instead of gRPC; plugin.proto (OpenLaneResponse) is its
// contract. A gRPC round trip between two processes is mostly HTTP/2
// framing and goroutine hand-offs (the caller, the loopy writer, the
// server's reader and handler, and back); on the lane the caller writes
// its frame itself, the plugin runs the call on one new goroutine that
// writes the answer itself, and the caller reads its own answer when no
// other call is waiting (see Lane).
//
// What crosses stays what gRPC would carry: the same request and response
// messages, the deadline (as time left), cancellation, and a status code
// and message, which FromRPC translates exactly as it does gRPC's.

const (
	// laneHandshakeTimeout bounds connecting to an offered lane and the
	// nonce exchange; an offer nobody takes up in time is withdrawn.
	laneHandshakeTimeout = 5 * time.Second
	// laneNonceSize is the size of the one-time secret of an offer.
	laneNonceSize = 32
	// maxLaneFrame matches the receive limit of gRPC on both sides
	// (MaxRecvMsgSize math.MaxInt32): tool arguments can be large.
	maxLaneFrame = math.MaxInt32
	// laneBuffer is the read buffer of each side: most frames fit whole.
	laneBuffer = 64 << 10
)

// errLaneClosed is the cause of a lane closed by its own side.
var errLaneClosed = errors.New("the direct lane was closed")

// writeFrame writes m as one length-prefixed frame with a single write,
// so that concurrent writers (holding mu) never interleave.
func writeFrame(mu *sync.Mutex, w io.Writer, m proto.Message) error {
	size := proto.Size(m)
	if size > maxLaneFrame {
		return fmt.Errorf("a frame of %d bytes is over the lane's limit of %d", size, maxLaneFrame)
	}
	buf := make([]byte, 4, 4+size)
	binary.BigEndian.PutUint32(buf, uint32(size))
	buf, err := proto.MarshalOptions{}.MarshalAppend(buf, m)
	if err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	_, err = w.Write(buf)
	return err
}

// frameReader reads frames from r. What it has read of a frame survives
// a failed Read, so that a read deadline (the host's way to stop waiting)
// never loses a frame's beginning.
type frameReader struct {
	r          io.Reader
	buf        []byte
	start, end int // buf[start:end] is read and not yet consumed
}

func newFrameReader(r io.Reader) *frameReader {
	return &frameReader{r: r, buf: make([]byte, laneBuffer)}
}

// next reads one frame into m.
func (f *frameReader) next(m proto.Message) error {
	for {
		avail := f.end - f.start
		need := 4
		if avail >= 4 {
			size := binary.BigEndian.Uint32(f.buf[f.start:])
			if size > maxLaneFrame {
				return fmt.Errorf("a frame of %d bytes is over the lane's limit of %d", size, maxLaneFrame)
			}
			need = 4 + int(size)
			if avail >= need {
				frame := f.buf[f.start+4 : f.start+need]
				f.start += need
				// Unmarshal copies what it keeps: buf is reused.
				err := proto.Unmarshal(frame, m)
				if f.start == f.end {
					f.start, f.end = 0, 0
					if len(f.buf) > 4*laneBuffer { // do not keep a huge frame's buffer
						f.buf = make([]byte, laneBuffer)
					}
				}
				if err != nil {
					return fmt.Errorf("a frame that does not decode: %w", err)
				}
				return nil
			}
		}
		if f.start+need > len(f.buf) { // make room: move what is left to the front
			if need > len(f.buf) {
				grown := make([]byte, need)
				copy(grown, f.buf[f.start:f.end])
				f.buf = grown
			} else {
				copy(f.buf, f.buf[f.start:f.end])
			}
			f.start, f.end = 0, avail
		}
		n, err := f.r.Read(f.buf[f.end:])
		f.end += n
		if err != nil {
			if errors.Is(err, io.EOF) && f.end > f.start {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
}

// LaneServer is the plugin's side of the direct lane: the unary methods
// of the kind service, served on every lane the host opens.
type LaneServer struct {
	log     hclog.Logger
	methods map[string]func(ctx context.Context, dec func(any) error) (any, error)

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
	offers map[io.Closer]struct{} // offered lanes not taken up yet
	wg     sync.WaitGroup         // offers and served connections
}

// NewLaneServer returns a lane server of impl's unary methods, as desc
// (the generated grpc.ServiceDesc of the kind service) lists them. log
// receives broken lanes; nil discards them.
func NewLaneServer(desc *grpc.ServiceDesc, impl any, log hclog.Logger) *LaneServer {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	s := &LaneServer{
		log:     log,
		methods: make(map[string]func(context.Context, func(any) error) (any, error), len(desc.Methods)),
		conns:   map[net.Conn]struct{}{},
		offers:  map[io.Closer]struct{}{},
	}
	for _, m := range desc.Methods {
		handler := m.Handler
		s.methods["/"+desc.ServiceName+"/"+m.MethodName] = func(ctx context.Context, dec func(any) error) (any, error) {
			// No interceptor: the gRPC server has none either.
			return handler(impl, ctx, dec, nil)
		}
	}
	return s
}

// Close withdraws open offers, closes every lane and waits for the calls
// in flight on them (their contexts are cancelled).
func (s *LaneServer) Close() {
	s.mu.Lock()
	s.closed = true
	for o := range s.offers {
		_ = o.Close()
	}
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// track registers a served connection to be closed by Close; false when
// the server is already closed.
func (s *LaneServer) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

// untrack forgets a served connection or an offer.
func (s *LaneServer) untrack(c io.Closer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if conn, ok := c.(net.Conn); ok {
		delete(s.conns, conn)
		return
	}
	delete(s.offers, c)
}

// serve answers the calls arriving on conn until it breaks. Each call
// runs on its own goroutine, so that a slow call never holds up another.
func (s *LaneServer) serve(conn net.Conn) {
	defer conn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var (
		wmu      sync.Mutex // one frame at a time on conn
		mu       sync.Mutex // guards inFlight
		inFlight = map[uint64]context.CancelFunc{}
		calls    sync.WaitGroup
	)
	defer calls.Wait()
	defer cancel() // before Wait: calls still running end now
	r := newFrameReader(conn)
	for {
		req := &pluginv1.LaneRequest{}
		if err := r.next(req); err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				s.log.Warn("the host's direct lane broke; its calls continue over gRPC", "error", err)
			}
			return
		}
		if req.GetCancel() {
			mu.Lock()
			if stop, ok := inFlight[req.GetId()]; ok {
				stop()
			}
			mu.Unlock()
			continue
		}
		var (
			callCtx context.Context
			stop    context.CancelFunc
		)
		if t := req.GetTimeoutMicros(); t > 0 {
			callCtx, stop = context.WithTimeout(ctx, time.Duration(t)*time.Microsecond)
		} else {
			callCtx, stop = context.WithCancel(ctx)
		}
		mu.Lock()
		inFlight[req.GetId()] = stop
		mu.Unlock()
		calls.Add(1)
		go func() {
			defer calls.Done()
			resp := s.call(callCtx, req)
			mu.Lock()
			delete(inFlight, req.GetId())
			mu.Unlock()
			stop()
			if err := writeFrame(&wmu, conn, resp); err != nil {
				// The reader sees the same broken connection and ends.
				_ = conn.Close()
			}
		}()
	}
}

// call runs one request and returns its response frame.
func (s *LaneServer) call(ctx context.Context, req *pluginv1.LaneRequest) *pluginv1.LaneResponse {
	resp := &pluginv1.LaneResponse{Id: req.GetId()}
	method, ok := s.methods[req.GetMethod()]
	if !ok {
		resp.Code, resp.Message = int32(codes.Unimplemented), fmt.Sprintf("method %s is not served on the direct lane", req.GetMethod())
		return resp
	}
	out, err := method(ctx, func(v any) error {
		m, ok := v.(proto.Message)
		if !ok {
			return fmt.Errorf("%T is not a protobuf message", v)
		}
		if err := proto.Unmarshal(req.GetPayload(), m); err != nil {
			return status.Errorf(codes.Internal, "the request does not decode: %v", err)
		}
		return nil
	})
	if err == nil {
		m, ok := out.(proto.Message)
		if !ok {
			err = status.Errorf(codes.Internal, "the plugin returned %T, not a protobuf message", out)
		} else if resp.Payload, err = proto.Marshal(m); err != nil {
			err = status.Errorf(codes.Internal, "encoding the response: %v", err)
		}
	}
	if err != nil {
		// The kind's shims already made it a status (ToStatus); a bare
		// error becomes UNKNOWN, as gRPC would send it.
		st := status.Convert(err)
		resp.Payload, resp.Code, resp.Message = nil, int32(st.Code()), st.Message()
	}
	return resp
}

// Lane is the host's side of a direct lane: a grpc.ClientConnInterface
// for the kind service's unary calls. Calls in flight when the lane
// breaks, and calls after, fail with UNAVAILABLE, like those of a broken
// gRPC connection.
//
// There is no reader goroutine: the callers waiting for answers take
// turns reading the socket, and the one reading hands other callers'
// answers to them. A lone call thus reads its own answer, with no
// goroutine hand-off between the socket and the caller.
type Lane struct {
	conn net.Conn
	wmu  sync.Mutex // one frame at a time on conn

	mu      sync.Mutex
	nextID  uint64
	pending map[uint64]*laneCall // nil once the lane broke
	reading bool                 // a caller holds the read side
	err     error                // why the lane broke; set once
	frames  *frameReader         // used only by the caller holding the read side

	done chan struct{} // closed when the lane broke or was closed
}

// laneCall is one call waiting for its answer.
type laneCall struct {
	resp chan *pluginv1.LaneResponse // capacity 1; closed if the lane breaks
	turn chan struct{}               // capacity 1: the read side may be free, look again
}

var _ grpc.ClientConnInterface = (*Lane)(nil)

func newLane(conn net.Conn) *Lane {
	return &Lane{
		conn:    conn,
		pending: map[uint64]*laneCall{},
		frames:  newFrameReader(conn),
		done:    make(chan struct{}),
	}
}

// Close closes the lane; calls in flight fail.
func (l *Lane) Close() error {
	l.fail(errLaneClosed)
	return nil
}

// Done is closed once the lane is broken or closed.
func (l *Lane) Done() <-chan struct{} { return l.done }

// open reports whether the lane still carries calls.
func (l *Lane) open() bool {
	select {
	case <-l.done:
		return false
	default:
		return true
	}
}

// fail breaks the lane for good: later calls and those in flight fail.
func (l *Lane) fail(err error) {
	l.mu.Lock()
	if l.pending == nil {
		l.mu.Unlock()
		return
	}
	l.err = err
	pending := l.pending
	l.pending = nil
	close(l.done)
	l.mu.Unlock()
	for _, c := range pending {
		close(c.resp)
	}
	_ = l.conn.Close()
}

func (l *Lane) broken() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return status.Errorf(codes.Unavailable, "the direct lane to the plugin broke: %v", l.err)
}

// Invoke makes one unary call over the lane.
func (l *Lane) Invoke(ctx context.Context, method string, args, reply any, _ ...grpc.CallOption) error {
	in, ok := args.(proto.Message)
	out, ok2 := reply.(proto.Message)
	if !ok || !ok2 {
		return status.Errorf(codes.Internal, "the direct lane carries protobuf messages, not %T and %T", args, reply)
	}
	if err := ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	payload, err := proto.Marshal(in)
	if err != nil {
		return status.Errorf(codes.Internal, "encoding the request: %v", err)
	}
	req := &pluginv1.LaneRequest{Method: method, Payload: payload}
	if deadline, ok := ctx.Deadline(); ok {
		left := time.Until(deadline)
		if left <= 0 {
			return status.Error(codes.DeadlineExceeded, context.DeadlineExceeded.Error())
		}
		req.TimeoutMicros = max(left.Microseconds(), 1)
	}
	c := &laneCall{resp: make(chan *pluginv1.LaneResponse, 1), turn: make(chan struct{}, 1)}
	l.mu.Lock()
	if l.pending == nil {
		l.mu.Unlock()
		return l.broken()
	}
	l.nextID++
	req.Id = l.nextID
	l.pending[req.Id] = c
	l.mu.Unlock()

	if err := writeFrame(&l.wmu, l.conn, req); err != nil {
		l.fail(err)
		return l.broken()
	}
	resp, err := l.await(ctx, req.Id, c)
	if err != nil {
		return err
	}
	if resp.GetCode() != int32(codes.OK) {
		return status.Error(codes.Code(resp.GetCode()), resp.GetMessage())
	}
	if err := proto.Unmarshal(resp.GetPayload(), out); err != nil {
		return status.Errorf(codes.Internal, "the plugin's response does not decode: %v", err)
	}
	return nil
}

// await waits for call id's answer, reading the socket itself whenever
// no other caller does.
func (l *Lane) await(ctx context.Context, id uint64, c *laneCall) (*pluginv1.LaneResponse, error) {
	for {
		l.mu.Lock()
		lead := !l.reading && l.pending != nil
		if lead {
			l.reading = true
		}
		l.mu.Unlock()
		if lead {
			return l.lead(ctx, id, c)
		}
		select {
		case resp, ok := <-c.resp:
			return l.answer(resp, ok)
		case <-c.turn: // the read side may be free: look again
		case <-ctx.Done():
			l.abandon(id)
			// A wake-up meant for this caller must not be lost.
			select {
			case <-c.turn:
				l.wakeWaiter(false)
			default:
			}
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
}

// lead reads the socket, handing answers to their callers, until call
// id's own answer arrives or ctx ends; then it frees the read side.
func (l *Lane) lead(ctx context.Context, id uint64, c *laneCall) (*pluginv1.LaneResponse, error) {
	defer l.wakeWaiter(true)
	// Our answer may have come in while another caller was reading.
	select {
	case resp, ok := <-c.resp:
		return l.answer(resp, ok)
	default:
	}
	// A read deadline in the past is the only way to stop a Read; the
	// frame reader keeps what it has read of a frame. Only this func sets
	// a deadline, and only while this caller reads: it has finished, and
	// the deadline is cleared, before the next reader starts.
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = l.conn.SetReadDeadline(time.Unix(1, 0))
		close(fired)
	})
	defer func() {
		if !stop() {
			<-fired
			_ = l.conn.SetReadDeadline(time.Time{})
		}
	}()
	for {
		resp := &pluginv1.LaneResponse{}
		err := l.frames.next(resp)
		if errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() != nil {
			l.abandon(id)
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		if err != nil {
			l.fail(err)
			return nil, l.broken()
		}
		l.mu.Lock()
		to, ok := l.pending[resp.GetId()]
		delete(l.pending, resp.GetId())
		l.mu.Unlock()
		switch {
		case resp.GetId() == id:
			return resp, nil
		case ok:
			to.resp <- resp
		}
		// else its caller stopped waiting: drop the late answer
	}
}

// answer is what a caller gets from its answer channel: the answer, or
// (closed) the broken lane's error.
func (l *Lane) answer(resp *pluginv1.LaneResponse, ok bool) (*pluginv1.LaneResponse, error) {
	if !ok {
		return nil, l.broken()
	}
	return resp, nil
}

// wakeWaiter wakes one waiting caller to take the read side if it is
// free. The reader passes stopReading: only the caller that reads ever
// frees the read side; a caller that leaves with a wake-up it will not
// use passes it on with false.
func (l *Lane) wakeWaiter(stopReading bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if stopReading {
		l.reading = false
	}
	if l.reading {
		return
	}
	for _, w := range l.pending {
		select {
		case w.turn <- struct{}{}:
		default:
		}
		return
	}
}

// abandon forgets call id, whose caller stops waiting, and tells the
// plugin, as gRPC would with RST_STREAM.
func (l *Lane) abandon(id uint64) {
	l.mu.Lock()
	if l.pending != nil {
		delete(l.pending, id)
	}
	l.mu.Unlock()
	if err := writeFrame(&l.wmu, l.conn, &pluginv1.LaneRequest{Id: id, Cancel: true}); err != nil {
		l.fail(err)
	}
}

// NewStream is not served on the lane: streams stay on gRPC.
func (l *Lane) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, status.Error(codes.Unimplemented, "the direct lane carries unary calls only")
}

// kindConn is the connection a kind's client calls its service through:
// gRPC until a lane is opened, the lane after (streams stay on gRPC).
type kindConn struct {
	grpc grpc.ClientConnInterface
	lane atomic.Pointer[Lane]
	// laneOffered: the plugin's last Info listed sdk.CapabilityLane.
	laneOffered atomic.Bool
}

func (k *kindConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	if l := k.lane.Load(); l != nil {
		if l.open() {
			return l.Invoke(ctx, method, args, reply, opts...)
		}
		// Broken: the calls it had failed like those of a broken gRPC
		// connection; later ones go back to gRPC, which tells whether the
		// plugin is still there.
		k.lane.CompareAndSwap(l, nil)
	}
	return k.grpc.Invoke(ctx, method, args, reply, opts...)
}

func (k *kindConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return k.grpc.NewStream(ctx, desc, method, opts...)
}
