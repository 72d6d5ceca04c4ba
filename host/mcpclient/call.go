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
	if opts.Timeout > 0 {
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

// pauseGroup runs the active-time timers of one client's calls and stops
// them all while any elicitation of that client is pending.
type pauseGroup struct {
	mu      sync.Mutex
	pending int
	timers  map[*activeTimer]struct{}
}

type activeTimer struct {
	remaining time.Duration // left when paused
	started   time.Time     // when the current run began
	timer     *time.Timer   // nil while paused
	fire      func()
}

func (g *pauseGroup) start(d time.Duration, fire func()) *activeTimer {
	g.mu.Lock()
	defer g.mu.Unlock()
	t := &activeTimer{remaining: d, fire: fire}
	if g.timers == nil {
		g.timers = map[*activeTimer]struct{}{}
	}
	g.timers[t] = struct{}{}
	if g.pending == 0 {
		t.run()
	}
	return t
}

func (g *pauseGroup) stop(t *activeTimer) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t.timer != nil {
		t.timer.Stop()
	}
	delete(g.timers, t)
}

func (g *pauseGroup) begin() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pending++
	if g.pending > 1 {
		return
	}
	for t := range g.timers {
		if t.timer != nil && t.timer.Stop() {
			t.remaining -= time.Since(t.started)
			t.timer = nil
		}
	}
}

func (g *pauseGroup) end() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pending--
	if g.pending > 0 {
		return
	}
	for t := range g.timers {
		if t.timer == nil {
			t.run()
		}
	}
}

func (t *activeTimer) run() {
	t.started = time.Now()
	t.timer = time.AfterFunc(max(t.remaining, 0), t.fire)
}
