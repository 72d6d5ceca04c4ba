package gateway_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolgate/toolgate/internal/testwait"
)

// gate is what mcp-demo --initialize-gate waits on: a server whose
// handshake is held until the test opens (or breaks) its gate, so "slow"
// is an order of events rather than a duration.
type gate struct {
	ln   net.Listener
	conn chan net.Conn
}

func newGate(t *testing.T) *gate {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{ln: ln, conn: make(chan net.Conn, 1)}
	t.Cleanup(func() { _ = ln.Close() })
	return g
}

func (g *gate) addr() string { return g.ln.Addr().String() }

// waiting returns the connection of the server holding its handshake,
// once it is there.
func (g *gate) waiting(t *testing.T) net.Conn {
	t.Helper()
	c, err := g.ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// connectServe connects a go-sdk client to a toolgate serve at url, at
// go-sdk's default version (2026-07-28).
func connectServe(t *testing.T, url string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return connectServeAt(t, url, opts, "")
}

// connectServeAt is connectServe asking for version.
func connectServeAt(t *testing.T, url string, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, opts)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: tr}},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tool := range res.Tools {
		out = append(out, tool.Name)
	}
	return out
}

func TestServeListsReadyServersWhileASlowOneStarts(t *testing.T) {
	g := newGate(t)
	cfg := writeConfig(t, directExposure,
		demoServer(t, "fast", t.TempDir()+"/calls", ""),
		demoServer(t, "slow", t.TempDir()+"/calls", "", "--initialize-gate", g.addr()))
	p := startServe(t, nil, "--http", "127.0.0.1:0", "--config", cfg)
	url := p.url(t)
	held := g.waiting(t) // slow is in its handshake, and stays there
	p.waitLine(t, regexp.MustCompile(`fast ready`))

	changed := make(chan struct{}, 16)
	cs := connectServe(t, url, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	names := toolNames(t, cs)
	if !slices.Contains(names, "mcp__fast__echo") || slices.Contains(names, "mcp__slow__echo") {
		t.Fatalf("while slow starts, tools/list = %v, want fast's tools and none of slow's", names)
	}
	if res := call(t, cs, "mcp__fast__echo", map[string]any{"text": "hi"}); res.IsError || text(res) != "hi" {
		t.Fatalf("calling fast while slow starts: %v", text(res))
	}

	if _, err := held.Write([]byte{1}); err != nil { // slow may finish its handshake now
		t.Fatal(err)
	}
	for !slices.Contains(names, "mcp__slow__echo") {
		testwait.Recv(t, changed, "notifications/tools/list_changed bringing slow's tools; last list %v", names)
		names = toolNames(t, cs)
	}
	if res := call(t, cs, "mcp__slow__echo", map[string]any{"text": "late"}); res.IsError || text(res) != "late" {
		t.Fatalf("calling slow once ready: %v", text(res))
	}
}

func TestServeKeepsServingWhenAServerNeverStarts(t *testing.T) {
	g := newGate(t)
	cfg := writeConfig(t, directExposure,
		demoServer(t, "fast", t.TempDir()+"/calls", ""),
		demoServer(t, "broken", t.TempDir()+"/calls", "", "--initialize-gate", g.addr()))
	p := startServe(t, nil, "--http", "127.0.0.1:0", "--config", cfg)
	url := p.url(t)
	held := g.waiting(t)
	p.waitLine(t, regexp.MustCompile(`fast ready`))

	logs := make(chan string, 16)
	// 2025-11-25: the test sets a log level, which 2026-07-28 dropped.
	cs := connectServeAt(t, url, &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
		logs <- fmt.Sprint(r.Params.Data)
	}}, "2025-11-25")
	if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	// Breaking the gate ends broken's handshake: its start fails. Closing
	// the listener too makes each retry fail at once.
	_ = g.ln.Close()
	_ = held.Close()
	for {
		msg := testwait.Recv(t, logs, "the client being told that broken failed to start")
		if strings.Contains(msg, `"broken" failed to start`) {
			break
		}
	}
	if names := toolNames(t, cs); !slices.Contains(names, "mcp__fast__echo") || slices.Contains(names, "mcp__broken__echo") {
		t.Fatalf("after broken failed, tools/list = %v, want fast's tools only", names)
	}
	if res := call(t, cs, "mcp__fast__echo", map[string]any{"text": "still here"}); res.IsError || text(res) != "still here" {
		t.Fatalf("calling fast after broken failed: %v", text(res))
	}
	select {
	case err := <-p.exited:
		t.Fatalf("toolgate serve exited when an optional server failed: %v", err)
	default:
	}
}

func TestServeExitsWhenARequiredServerFailsToStart(t *testing.T) {
	g := newGate(t)
	cfg := writeConfig(t, directExposure,
		demoServer(t, "fast", t.TempDir()+"/calls", ""),
		demoServer(t, "needed", t.TempDir()+"/calls", "required = true", "--initialize-gate", g.addr()))
	p := startServe(t, nil, "--http", "127.0.0.1:0", "--config", cfg)
	url := p.url(t)
	held := g.waiting(t)
	p.waitLine(t, regexp.MustCompile(`fast ready`))
	// Served at once, before the required server is ready…
	if names := toolNames(t, connectServe(t, url, nil)); !slices.Contains(names, "mcp__fast__echo") {
		t.Fatalf("tools/list = %v, want fast's tools", names)
	}
	// …and stopped with exit code 1 when it fails, as before.
	_ = held.Close()
	if code := p.exitCode(t); code != 1 {
		t.Fatalf("exit code %d, want 1", code)
	}
}

// directExposure keeps every tool in the list: with two servers, auto
// would defer them behind tool_search.
const directExposure = "exposure {\n  mode = \"direct\"\n}\n"

// waitTool waits until cs lists name, re-listing on each
// notifications/tools/list_changed that changed receives: toolgate serve
// answers before its servers are ready.
func waitTool(t *testing.T, cs *mcp.ClientSession, changed <-chan struct{}, name string) {
	t.Helper()
	for names := toolNames(t, cs); !slices.Contains(names, name); names = toolNames(t, cs) {
		testwait.Recv(t, changed, "%s to be listed; last list %v", name, names)
	}
}
