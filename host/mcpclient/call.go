package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CallOptions tunes one tools/call.
type CallOptions struct {
	// Timeout bounds the call's active time: the clock stops while this
	// server waits on an elicitation answered by a human. Zero means no
	// timeout beyond ctx. On expiry the request is cancelled (go-sdk sends
	// notifications/cancelled) and a *TimeoutError is returned.
	Timeout time.Duration
	// OnProgress, when set, receives the server's progress notifications
	// for this call, in order and before the result. It runs on the
	// connection's read path: it must not block.
	OnProgress func(*mcp.ProgressNotificationParams)
}

// TimeoutError is a tool call that ran out of active time.
type TimeoutError struct{ After time.Duration }

func (e *TimeoutError) Error() string {
	return "timed out awaiting tools/call after " + strconv.FormatFloat(e.After.Seconds(), 'f', -1, 64) + "s"
}

// Is lets callers match context.DeadlineExceeded as well.
func (e *TimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

var errActiveTimeout = errors.New("active-time timeout")

// CallTool sends tools/call. params is not modified.
func (c *Client) CallTool(ctx context.Context, params *mcp.CallToolParams, opts CallOptions) (*mcp.CallToolResult, error) {
	if _, err := c.sessionOrErr(); err != nil {
		return nil, err
	}
	p := params
	if opts.OnProgress != nil {
		// The token goes into _meta: a copy, so the caller's params and
		// _meta stay as they were.
		cp := *params
		if cp.Meta != nil {
			cp.Meta = cloneMeta(cp.Meta)
		}
		token := c.router.register(opts.OnProgress)
		defer c.router.unregister(token)
		cp.SetProgressToken(token)
		p = &cp
	}
	if opts.Timeout > 0 && !deadlineWithin(ctx, opts.Timeout) {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		t := c.pause.start(opts.Timeout, func() { cancel(errActiveTimeout) })
		defer c.pause.stop(t)
	}
	var res *mcp.CallToolResult
	err := c.run(ctx, func(s *mcp.ClientSession) (err error) {
		res, err = s.CallTool(ctx, p)
		return err
	})
	if err != nil {
		if errors.Is(context.Cause(ctx), errActiveTimeout) {
			return nil, &TimeoutError{After: opts.Timeout}
		}
		if ctx.Err() == nil {
			// A live session would have answered: prefer why it died.
			// A broken stdio connection means the session is ending:
			// wait for its reason (exit status, stderr tail) rather than
			// report a bare EOF.
			if c.opts.Stdio != nil && connectionBroke(err) {
				select {
				case <-c.done:
				case <-ctx.Done():
				}
			}
			select {
			case <-c.done:
				if cerr := c.Err(); cerr != nil {
					return nil, c.secrets.redactError(fmt.Errorf("calling tool %q: %w", params.Name, cerr))
				}
			default:
			}
		}
		return nil, c.secrets.redactError(fmt.Errorf("calling tool %q: %w", params.Name, specificError(err)))
	}
	return res, nil
}

// connectionBroke reports whether a request failed because the
// connection under the session ended.
func connectionBroke(err error) bool {
	return errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

func cloneMeta(m mcp.Meta) mcp.Meta {
	out := make(mcp.Meta, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// deadlineWithin reports whether ctx ends, by its deadline, before d
// has passed. The active time of a call can only run out later than its
// wall time (it pauses, never speeds up), so such a ctx ends the call
// first and it needs no timer of its own.
func deadlineWithin(ctx context.Context, d time.Duration) bool {
	dl, ok := ctx.Deadline()
	return ok && time.Until(dl) <= d
}

// pauseGroup runs the active-time timers of one client's calls and stops
// them all while any elicitation of that client is pending.
//
// The calls share one clock, armed for the earliest deadline: a call
// whose deadline is later than the armed one (every call of a run with
// one timeout) starts and stops no runtime timer, so a plain call adds
// no timer and no poller wake-up. The clock may stay armed after its
// call ended; when it fires it ends what is due and re-arms for the
// rest, or for nothing.
type pauseGroup struct {
	mu      sync.Mutex
	pending int
	timers  map[*activeTimer]struct{}
	clock   *time.Timer // nil until the first timeout
	armed   bool        // clock is set to fire at armedAt
	armedAt time.Time
}

type activeTimer struct {
	remaining time.Duration // left when paused
	started   time.Time     // when the current run began
	running   bool          // false while paused
	fire      func()
}

func (t *activeTimer) deadline() time.Time { return t.started.Add(t.remaining) }

func (g *pauseGroup) start(d time.Duration, fire func()) *activeTimer {
	g.mu.Lock()
	defer g.mu.Unlock()
	t := &activeTimer{remaining: d, fire: fire}
	if g.timers == nil {
		g.timers = map[*activeTimer]struct{}{}
	}
	g.timers[t] = struct{}{}
	if g.pending == 0 {
		t.started, t.running = time.Now(), true
		g.arm(t.deadline())
	}
	return t
}

func (g *pauseGroup) stop(t *activeTimer) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.timers, t)
}

// arm makes the clock fire no later than when. Called with g.mu held.
func (g *pauseGroup) arm(when time.Time) {
	if g.armed && !when.Before(g.armedAt) {
		return
	}
	g.armed, g.armedAt = true, when
	if g.clock == nil {
		g.clock = time.AfterFunc(time.Until(when), g.tick)
		return
	}
	g.clock.Reset(time.Until(when))
}

// tick ends the calls whose active time ran out and re-arms the clock
// for the earliest of the others.
func (g *pauseGroup) tick() {
	g.mu.Lock()
	g.armed = false
	if g.pending > 0 {
		g.mu.Unlock()
		return // end re-arms
	}
	now := time.Now()
	var (
		due  []func()
		next time.Time
	)
	for t := range g.timers {
		if !t.running {
			continue
		}
		if dl := t.deadline(); !dl.After(now) {
			due = append(due, t.fire)
			delete(g.timers, t) // fired once; stop has nothing left to do
		} else if next.IsZero() || dl.Before(next) {
			next = dl
		}
	}
	if !next.IsZero() {
		g.arm(next)
	}
	g.mu.Unlock()
	for _, fire := range due {
		fire()
	}
}

// close stops the clock for good (the client closed).
func (g *pauseGroup) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.clock != nil {
		g.clock.Stop()
	}
	g.armed = false
}

func (g *pauseGroup) begin() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pending++
	if g.pending > 1 {
		return
	}
	now := time.Now()
	for t := range g.timers {
		if t.running {
			t.remaining -= now.Sub(t.started)
			t.running = false
		}
	}
	if g.clock != nil && g.armed {
		g.clock.Stop()
		g.armed = false
	}
}

func (g *pauseGroup) end() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pending--
	if g.pending > 0 {
		return
	}
	now := time.Now()
	for t := range g.timers {
		if !t.running {
			t.started, t.running = now, true
			g.arm(t.deadline())
		}
	}
}
