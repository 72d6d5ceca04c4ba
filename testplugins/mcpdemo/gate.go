package mcpdemo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

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
// before the server sees them, so nothing answers), --crash-after (exit
// only once the response bytes are written) and --list-changed-storm
// (faster than go-sdk's own debounced notifications ever go).
func (d *Demo) GateTransport(inner mcp.Transport) mcp.Transport {
	if !d.cfg.IgnoreUnknown && d.cfg.CrashAfter <= 0 && d.cfg.ListChangedStorm <= 0 && !d.cfg.HangInitialize && d.cfg.InitializeGate == "" {
		return inner
	}
	return &gateTransport{inner: inner, demo: d}
}

// strayResponses is what --stray-responses writes after every response:
// an error response with "id": null (as a server whose JSON-RPC layer
// failed to parse a request sends) and a response without any id. go-sdk
// cannot encode either, so they are written as raw lines.
const strayResponses = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}` + "\n" +
	`{"jsonrpc":"2.0","result":{}}` + "\n"

// badTools is what --bad-tools adds to every tools/list answer, raw:
// a tool whose name is a number, one whose name holds a lone UTF-16
// surrogate, and a second tool named echo.
const badTools = `{"name":5,"inputSchema":{"type":"object"}},` +
	`{"name":"lone\ud800surrogate","inputSchema":{"type":"object"}},` +
	`{"name":"echo","description":"a second echo","inputSchema":{"type":"object"}}`

// strayWriter is the stdio writer under --stray-responses, --bad-tools
// and --deep-schema:
// they need bytes go-sdk cannot encode. go-sdk writes one message per
// Write, so each is handled whole, and the lock keeps concurrent writes
// from interleaving.
type strayWriter struct {
	mu     sync.Mutex
	w      io.WriteCloser
	strays bool
	// extraTools are raw tool objects (comma-separated) added first to
	// every tools/list answer: --bad-tools, --deep-schema.
	extraTools string
}

func (s *strayWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	msg, derr := jsonrpc.DecodeMessage(bytes.TrimSpace(p))
	resp, isResp := msg.(*jsonrpc.Response)
	out := p
	if derr == nil && isResp && s.extraTools != "" {
		if i := bytes.Index(resp.Result, []byte(`"tools":[`)); i >= 0 {
			at := i + len(`"tools":[`)
			result := append(append(append([]byte(nil), resp.Result[:at]...), s.extraTools+","...), resp.Result[at:]...)
			line, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: resp.ID, Result: result})
			if err != nil {
				return 0, err
			}
			out = append(line, '\n')
		}
	}
	if _, err := s.w.Write(out); err != nil {
		return 0, err
	}
	if derr == nil && isResp && s.strays {
		if _, err := io.WriteString(s.w, strayResponses); err != nil {
			return len(p), err
		}
	}
	return len(p), nil
}

func (s *strayWriter) Close() error { return s.w.Close() }

type gateTransport struct {
	inner mcp.Transport
	demo  *Demo
}

func (t *gateTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &gateConn{Connection: conn, demo: t.demo, calls: map[jsonrpc.ID]bool{}, closed: make(chan struct{})}, nil
}

type gateConn struct {
	mcp.Connection
	demo *Demo

	mu    sync.Mutex
	calls map[jsonrpc.ID]bool // in-flight tools/call request ids

	gate    sync.Once // --initialize-gate opens once
	gateErr error

	storm     sync.Once     // --list-changed-storm starts once
	stormDone chan struct{} // closed when the storm goroutine returns
	closed    chan struct{}
	closeOnce sync.Once
}

// Close ends the session and waits for a storm to stop writing.
func (c *gateConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	err := c.Connection.Close()
	if c.stormDone != nil {
		<-c.stormDone
	}
	return err
}

// startStorm sends notifications/tools/list_changed every interval until
// the connection closes or a write fails. Called from Read, once.
func (c *gateConn) startStorm(ctx context.Context, interval time.Duration) {
	c.stormDone = make(chan struct{})
	note := &jsonrpc.Request{Method: "notifications/tools/list_changed"}
	go func() {
		defer close(c.stormDone)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-c.closed:
				return
			case <-tick.C:
			}
			if err := c.Connection.Write(context.WithoutCancel(ctx), note); err != nil {
				return
			}
		}
	}()
}

func (c *gateConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return msg, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if ok && req.Method == "notifications/initialized" && c.demo.cfg.ListChangedStorm > 0 {
			c.storm.Do(func() { c.startStorm(ctx, c.demo.cfg.ListChangedStorm) })
		}
		if !ok || !req.IsCall() {
			return msg, nil
		}
		if c.demo.cfg.HangInitialize && (req.Method == "initialize" || req.Method == "server/discover") {
			c.demo.stderr.printf("mcp-demo: never answering %q (--hang-initialize)", req.Method)
			continue
		}
		if c.demo.cfg.InitializeGate != "" && (req.Method == "initialize" || req.Method == "server/discover") {
			c.gate.Do(func() { c.gateErr = c.waitGate(ctx) })
			if c.gateErr != nil {
				return nil, c.gateErr
			}
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

// waitGate holds the handshake until --initialize-gate's address sends
// one byte.
func (c *gateConn) waitGate(ctx context.Context) error {
	addr := c.demo.cfg.InitializeGate
	c.demo.stderr.printf("mcp-demo: holding the handshake until %s opens the gate (--initialize-gate)", addr)
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("--initialize-gate: %w", err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	if _, err := io.ReadFull(conn, make([]byte, 1)); err != nil {
		return fmt.Errorf("--initialize-gate %s closed before opening: %w", addr, err)
	}
	return nil
}
