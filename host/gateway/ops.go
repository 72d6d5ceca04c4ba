package gateway

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/manager"
)

// ErrDraining is returned by the Serve methods and answers (HTTP 503)
// requests that would open a session once Drain began: the replica is
// going away, and the client should connect to another one.
var ErrDraining = errors.New("gateway: draining (shutting down); connect again to reach another replica")

// ErrNotReady is matched (errors.Is) by Ready's answer.
var ErrNotReady = errors.New("gateway not ready")

// ops is the gateway's operational state: whether it drains, and the
// work in flight that draining waits for (HTTP POSTs being answered and
// tool calls running).
type ops struct {
	mu       sync.Mutex
	draining bool
	active   int
	// idle is closed when active drops to 0 while someone waits in Drain.
	idle chan struct{}
}

// track counts one piece of work in flight until the returned function
// is called (once).
func (o *ops) track() (done func()) {
	o.mu.Lock()
	o.active++
	o.mu.Unlock()
	t := &tracked{o: o}
	return t.end
}

// tracked is one piece of work track counts; end may be called more than
// once.
type tracked struct {
	o     *ops
	ended atomic.Bool
}

func (t *tracked) end() {
	if !t.ended.CompareAndSwap(false, true) {
		return
	}
	o := t.o
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.active--; o.active == 0 && o.idle != nil {
		close(o.idle)
		o.idle = nil
	}
}

func (o *ops) isDraining() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.draining
}

// Drain stops the gateway from opening sessions (new ones get
// ErrDraining, HTTP 503) and makes Ready fail, then waits until no call
// runs and no HTTP request is being answered, or until ctx ends (its
// error is returned: calls still running are then cancelled by Close or
// by ServeHTTP's return). Open sessions may still call tools while
// draining; the grace period in ctx bounds them.
func (g *Gateway) Drain(ctx context.Context) error {
	o := &g.ops
	o.mu.Lock()
	if !o.draining {
		o.draining = true
		n := o.active
		o.mu.Unlock()
		var grace time.Duration
		if dl, ok := ctx.Deadline(); ok {
			grace = time.Until(dl)
		}
		g.log.Info("draining: refusing new sessions and waiting for calls in flight", "in_flight", n, "grace", grace)
		g.host.Bus.Emit(events.Draining{At: time.Now(), InFlight: n, Grace: grace})
		o.mu.Lock()
	}
	for o.active > 0 {
		if o.idle == nil {
			o.idle = make(chan struct{})
		}
		idle := o.idle
		n := o.active
		o.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			g.log.Warn("drain grace period over; cancelling what still runs", "in_flight", n)
			return fmt.Errorf("drain: %d request(s) or call(s) still in flight: %w", n, ctx.Err())
		}
		o.mu.Lock()
	}
	o.mu.Unlock()
	return nil
}

// Sessions is the number of open upstream sessions.
func (g *Gateway) Sessions() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.sessions)
}

// Ready says whether this gateway should receive new clients: it is
// attached, not draining, and every enabled required server is ready.
// The error (errors.Is ErrNotReady) names what is not.
func (g *Gateway) Ready() error {
	if g.ops.isDraining() {
		return fmt.Errorf("%w: draining for shutdown", ErrNotReady)
	}
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	if closed {
		return fmt.Errorf("%w: closed", ErrNotReady)
	}
	var down []string
	for _, st := range g.host.Manager.Status() {
		if st.Required && st.Status != events.StatusReady && st.Status != manager.StatusDisabled {
			down = append(down, fmt.Sprintf("%s is %s", st.Name, st.Status))
		}
	}
	if len(down) > 0 {
		sort.Strings(down)
		return fmt.Errorf("%w: required MCP server(s) not ready: %s", ErrNotReady, strings.Join(down, "; "))
	}
	return nil
}

// traceParent is the W3C traceparent of a tools/call: the one in its
// _meta (how MCP carries it over any transport) or else the HTTP
// request's header. Only a well-formed value is passed on.
func traceParent(req *mcp.CallToolRequest) string {
	return traceParentOf(req.Params.Meta, req.Extra)
}

// traceParentOf is the traceparent of any request: its params' _meta,
// else the HTTP header; "" when none or malformed.
func traceParentOf(meta mcp.Meta, extra *mcp.RequestExtra) string {
	var tp string
	if v, ok := meta["traceparent"].(string); ok {
		tp = v
	} else if extra != nil && extra.Header != nil {
		tp = extra.Header.Get("traceparent")
	}
	if !wellFormedTraceParent(tp) {
		return ""
	}
	return tp
}

// wellFormedTraceParent checks the version-00 shape
// (00-<32 hex>-<16 hex>-<2 hex>) so that a client cannot put arbitrary
// text into events and the audit log through this field.
func wellFormedTraceParent(tp string) bool {
	if len(tp) != 55 || tp[2] != '-' || tp[35] != '-' || tp[52] != '-' {
		return false
	}
	for i, r := range tp {
		if i == 2 || i == 35 || i == 52 {
			continue
		}
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

// drainFor drains with the configured grace period, bounded by Close.
// Calls still running when it is over are cut (see cutCalls), so each
// gets an answer before the caller ends the sessions.
func (g *Gateway) drainFor() {
	ctx, cancel := context.WithTimeout(g.ctx, g.opts.DrainGrace)
	defer cancel()
	if g.Drain(ctx) != nil { // logged
		g.cutCalls()
	}
}

// answerGrace bounds how long cutCalls waits for the answers of the calls
// it cut to be written: a cancelled call ends at once unless its server
// connection is stuck, and then its answer cannot wait for it.
const answerGrace = 5 * time.Second

// ShutdownCutText is the tool error a call gets when shutdown cuts it.
const ShutdownCutText = "toolgate: the gateway is shutting down and cut this call off when its drain grace " +
	"(serve { drain_grace }) ran out; the MCP server was told to cancel it. The call may or may not have run, " +
	"in part or in full: check its effects before calling it again (on another replica, or once toolgate is back)."

// cutCalls ends every call still running at shutdown: its context is
// cancelled, so the downstream server gets notifications/cancelled, and
// its client gets ShutdownCutText as a tool error instead of a stream
// that closes without an answer. It waits (at most answerGrace) until
// those answers are written; the sessions end after it.
func (g *Gateway) cutCalls() {
	for _, s := range g.snapshot() {
		s.mu.Lock()
		calls := make([]*call, 0, len(s.calls))
		for c := range s.calls {
			calls = append(calls, c)
		}
		s.mu.Unlock()
		for _, c := range calls {
			c.cutForShutdown()
		}
	}
	ctx, cancel := context.WithTimeout(g.ctx, answerGrace)
	defer cancel()
	_ = g.Drain(ctx) // draining already: this waits for the answers
}
