package mcpclient

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Session recovery (Streamable HTTP only). A server that restarts or
// times a session out answers 404 to requests carrying the old session id.
// The request that hits it re-initializes the client once, on a fresh
// transport, and is sent once more on the new session; a second 404 is
// the caller's error, and the next request starts recovery again.
// Concurrent callers share one recovery: the first runs it, the others
// wait and reuse its session.

// run sends one request through op on the live session, recovering an
// expired session once.
func (c *Client) run(ctx context.Context, op func(*mcp.ClientSession) error) error {
	s, err := c.sessionOrErr()
	if err != nil {
		return err
	}
	err = op(s)
	if err == nil || c.opts.HTTP == nil || !c.expiredBy(s, err) {
		return err
	}
	fresh, rerr := c.recoverSession(ctx, s)
	if rerr != nil {
		return fmt.Errorf("re-initializing after the session expired: %w", rerr)
	}
	return op(fresh)
}

// expiredBy reports whether err from a request on s means s expired: the
// server said so, or s is gone already. A request still in flight when
// another caller's recovery closed s fails with "client is closing"; the
// server had forgotten s, so it never ran that request either.
func (c *Client) expiredBy(s *mcp.ClientSession, err error) bool {
	if expiredError(err) {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.expired == s || (c.state == StateReady && c.session != s)
}

func expiredError(err error) bool {
	return errors.Is(err, ErrSessionExpired) || errors.Is(err, mcp.ErrSessionMissing)
}

// recoverSession replaces the expired session failed with a new one,
// unless another caller already did.
func (c *Client) recoverSession(ctx context.Context, failed *mcp.ClientSession) (*mcp.ClientSession, error) {
	select {
	case c.recovering <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-c.recovering }()

	c.mu.Lock()
	current, version := c.session, c.version
	c.mu.Unlock()
	if _, err := c.sessionOrErr(); err != nil {
		return nil, err
	}
	if current != failed {
		return current, nil // recovered by the caller before us
	}
	c.log.Info("MCP session expired; re-initializing")
	if err := c.connect(ctx, version); err != nil {
		return nil, err
	}

	c.mu.Lock()
	fresh := c.session
	c.expired = nil
	closing := c.closing
	if !closing {
		c.wg.Add(2)
	}
	c.mu.Unlock()
	if closing {
		_ = fresh.Close()
		return nil, ErrClosed
	}
	go c.watch(fresh)
	go func() {
		defer c.wg.Done()
		// Ends its watcher; the DELETE it sends is answered 404, harmlessly.
		_ = failed.Close()
	}()
	// A new session forgets the log level the old one was given.
	c.enableLogging(ctx, fresh)
	return fresh, nil
}
