package mcpdemo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxHTTPBody leaves room for echo_big round trips of several MiB; go-sdk's
// 4 MiB default would reject a 4 MiB argument once JSON-wrapped.
const maxHTTPBody = 64 << 20

// ServeStdio serves one session over r/w (newline-delimited JSON) until the
// peer closes r (EOF: returns nil) or ctx ends (returns ctx.Err()). Under
// --ignore-sigterm EOF does not end it; only ctx does.
func (d *Demo) ServeStdio(ctx context.Context, r io.ReadCloser, w io.WriteCloser) error {
	if d.cfg.StrayResponses || d.cfg.BadTools || d.cfg.DeepSchema > 0 {
		var extra []string
		if d.cfg.BadTools {
			extra = append(extra, badTools)
		}
		if d.cfg.DeepSchema > 0 {
			extra = append(extra, deepSchemaTool(d.cfg.DeepSchema))
		}
		w = &strayWriter{w: w, strays: d.cfg.StrayResponses, extraTools: strings.Join(extra, ",")}
	}
	t := d.GateTransport(&mcp.IOTransport{Reader: r, Writer: w})
	ss, err := d.server.Connect(ctx, t, nil)
	if err != nil {
		return fmt.Errorf("start stdio session: %w", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- ss.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			return fmt.Errorf("serve stdio: %w", err)
		}
		if d.cfg.IgnoreSIGTERM {
			d.stderr.printf("mcp-demo: stdin closed; staying alive (--ignore-sigterm)")
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	case <-ctx.Done():
		_ = ss.Close()
		<-waited
		return ctx.Err()
	}
}

// HTTPHandler serves Streamable HTTP with stateful sessions. Mount it at
// /mcp. Requests it holds for --ignore-unknown are released when done is
// closed, so a server shutdown does not wait for the client to give up.
func (d *Demo) HTTPHandler(done <-chan struct{}) http.Handler {
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return d.server },
		&mcp.StreamableHTTPOptions{MaxRequestBodyBytes: maxHTTPBody})
	if !d.cfg.IgnoreUnknown && d.cfg.CrashAfter <= 0 {
		return inner
	}
	return &httpGate{demo: d, inner: inner, done: done}
}

// httpGate is the HTTP counterpart of gateConn: it peeks at each POSTed
// JSON-RPC message before go-sdk sees it.
type httpGate struct {
	demo  *Demo
	inner http.Handler
	done  <-chan struct{}
}

func (g *httpGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Body == nil {
		g.inner.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxHTTPBody+1))
	if err != nil {
		http.Error(w, "read request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	// Batches and garbage go to go-sdk unchanged; it reports them.
	msg, _ := jsonrpc.DecodeMessage(body)
	req, _ := msg.(*jsonrpc.Request)
	if req == nil || !req.IsCall() {
		g.inner.ServeHTTP(w, r)
		return
	}
	if g.demo.cfg.IgnoreUnknown && !isLegacyMethod(req.Method) {
		g.demo.stderr.printf("mcp-demo: ignoring request %q without answering (--ignore-unknown)", req.Method)
		select {
		case <-r.Context().Done():
		case <-g.done:
		}
		return
	}
	g.inner.ServeHTTP(w, r)
	if req.Method != methodCallTool || g.demo.cfg.CrashAfter <= 0 {
		return
	}
	if tracker, ok := r.Context().Value(connTrackerKey{}).(*connTracker); ok {
		// Exit once net/http has finished this response (see connTracker).
		tracker.afterResponse(r.Context().Value(connKey{}), g.demo.noteCallResponseWritten)
		return
	}
	// Mounted without ServeStreamableHTTP: flush what we can and count now.
	_ = http.NewResponseController(w).Flush()
	g.demo.noteCallResponseWritten()
}

type (
	connKey        struct{}
	connTrackerKey struct{}
)

// connTracker runs a callback once a connection has finished its current
// response (it turns idle or closes), which is the first moment the whole
// response is known to have been written.
type connTracker struct {
	mu      sync.Mutex
	pending map[any][]func()
}

func (t *connTracker) afterResponse(conn any, f func()) {
	if conn == nil {
		f()
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pending[conn] = append(t.pending[conn], f)
}

func (t *connTracker) connState(c net.Conn, state http.ConnState) {
	if state != http.StateIdle && state != http.StateClosed && state != http.StateHijacked {
		return
	}
	t.mu.Lock()
	fs := t.pending[c]
	delete(t.pending, c)
	t.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// ServeStreamableHTTP serves /mcp on ln until ctx ends, then shuts down.
// It prints "listening on http://ADDR/mcp" to stderr once ln accepts.
func (d *Demo) ServeStreamableHTTP(ctx context.Context, ln net.Listener) error {
	done := make(chan struct{})
	// Cancelling the base context ends long-lived SSE streams at shutdown,
	// which http.Server.Shutdown alone would wait for.
	baseCtx, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBase()
	tracker := &connTracker{pending: map[any][]func(){}}
	mux := http.NewServeMux()
	mux.Handle("/mcp", d.HTTPHandler(done))
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return baseCtx },
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			ctx = context.WithValue(ctx, connTrackerKey{}, tracker)
			return context.WithValue(ctx, connKey{}, c)
		},
		ConnState: tracker.connState,
	}
	d.stderr.printf("listening on http://%s/mcp", ln.Addr())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		close(done)
		return fmt.Errorf("serve http: %w", err)
	case <-ctx.Done():
	}
	close(done)
	cancelBase()
	for ss := range d.server.Sessions() {
		_ = ss.Close()
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	if serveErr := <-served; !errors.Is(serveErr, http.ErrServerClosed) {
		return fmt.Errorf("serve http: %w", serveErr)
	}
	if err != nil {
		// Long-lived SSE streams keep connections busy; cut them.
		_ = srv.Close()
	}
	return nil
}
