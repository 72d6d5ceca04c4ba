package mcpdemo

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// isLegacyMethod reports whether an old (pre-2026-07-28) server knows the
// request method. Under --ignore-unknown anything else is swallowed
// without an answer, the way some released servers treat the go-sdk
// client's server/discover probe.
func isLegacyMethod(method string) bool {
	switch method {
	case "initialize", "ping",
		"tools/list", "tools/call",
		"prompts/list", "prompts/get",
		"resources/list", "resources/templates/list", "resources/read",
		"resources/subscribe", "resources/unsubscribe",
		"logging/setLevel", "completion/complete":
		return true
	}
	return false
}

// GateTransport wraps the transport a server session runs on with the
// behaviours that must act below go-sdk: --ignore-unknown (drop requests
// before the server sees them, so nothing answers) and --crash-after (exit
// only once the response bytes are written).
func (d *Demo) GateTransport(inner mcp.Transport) mcp.Transport {
	if !d.cfg.IgnoreUnknown && d.cfg.CrashAfter <= 0 {
		return inner
	}
	return &gateTransport{inner: inner, demo: d}
}

type gateTransport struct {
	inner mcp.Transport
	demo  *Demo
}

func (t *gateTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &gateConn{Connection: conn, demo: t.demo, calls: map[jsonrpc.ID]bool{}}, nil
}

type gateConn struct {
	mcp.Connection
	demo *Demo

	mu    sync.Mutex
	calls map[jsonrpc.ID]bool // in-flight tools/call request ids
}

func (c *gateConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return msg, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.IsCall() {
			return msg, nil
		}
		if c.demo.cfg.IgnoreUnknown && !isLegacyMethod(req.Method) {
			c.demo.stderr.printf("mcp-demo: ignoring request %q without answering (--ignore-unknown)", req.Method)
			continue
		}
		if c.demo.cfg.CrashAfter > 0 && req.Method == methodCallTool {
			c.mu.Lock()
			c.calls[req.ID] = true
			c.mu.Unlock()
		}
		return msg, nil
	}
}

func (c *gateConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || err != nil {
		return err
	}
	c.mu.Lock()
	wasCall := c.calls[resp.ID]
	delete(c.calls, resp.ID)
	c.mu.Unlock()
	if wasCall {
		c.demo.noteCallResponseWritten()
	}
	return nil
}
