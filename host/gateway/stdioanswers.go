package gateway

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A call's work ends (Drain sees it idle) when its handler returns, but
// go-sdk writes the answer after that. Over HTTP the request itself is
// tracked until its answer is written; over stdio nothing was, so ending
// the session at shutdown raced the answer of a call it had just cut
// (the client read EOF instead of ShutdownCutText). answeredTransport
// counts the requests a stdio session has read and not yet answered, so
// ServeStdio can wait for their answers before it closes the session.

// answeredTransport wraps a stdio transport to count unanswered requests.
// subscriptions/listen is not counted: it is open for the whole session
// by design and answered when the session ends.
type answeredTransport struct {
	mcp.Transport
	pending *pendingAnswers
}

func (t *answeredTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &answeredConn{Connection: c, pending: t.pending}, nil
}

type answeredConn struct {
	mcp.Connection
	pending *pendingAnswers
}

func (c *answeredConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Method != "subscriptions/listen" {
		c.pending.add(req.ID)
	}
	return msg, err
}

func (c *answeredConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.pending.done(resp.ID) // written or failed: either way no longer awaited
	}
	return err
}

// pendingAnswers is the set of request ids read and not yet answered.
type pendingAnswers struct {
	mu  sync.Mutex
	ids map[jsonrpc.ID]struct{}
	// idle is closed when ids empties while someone waits.
	idle chan struct{}
}

func (u *pendingAnswers) add(id jsonrpc.ID) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.ids == nil {
		u.ids = map[jsonrpc.ID]struct{}{}
	}
	u.ids[id] = struct{}{}
}

func (u *pendingAnswers) done(id jsonrpc.ID) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.ids, id)
	if len(u.ids) == 0 && u.idle != nil {
		close(u.idle)
		u.idle = nil
	}
}

// wait returns when every request read so far is answered, or when ctx
// ends (a request whose answer cannot come, e.g. one stuck on a server
// connection, must not hold the shutdown).
func (u *pendingAnswers) wait(ctx context.Context) {
	u.mu.Lock()
	if len(u.ids) == 0 {
		u.mu.Unlock()
		return
	}
	if u.idle == nil {
		u.idle = make(chan struct{})
	}
	idle := u.idle
	u.mu.Unlock()
	select {
	case <-idle:
	case <-ctx.Done():
	}
}
