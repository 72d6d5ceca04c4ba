package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/gateway"
	"github.com/toolgate/toolgate/host/manager"
	"github.com/toolgate/toolgate/internal/contain"
	"github.com/toolgate/toolgate/internal/testbin"
)

// TestMain makes the test binary what toolgate's main is to the processes
// it starts in-process: a possible supervisor (contain.RunSupervisorIfAsked),
// without which a server's setsid descendant escapes its cell.
func TestMain(m *testing.M) {
	contain.RunSupervisorIfAsked()
	os.Exit(testbin.Main(m))
}

// fixture is a started host with one or more servers and a gateway in
// front of it.
type fixture struct {
	dir     string
	cfgPath string
	calls   string // mcp-demo's call log
	h       *host.Host
	gw      *gateway.Gateway
	noAudit bool // the config has no audit_log
}

// demoServer is a server block running mcp-demo with a call log; body is
// extra HCL for the block.
func demoServer(t testing.TB, name, calls, body string, args ...string) string {
	t.Helper()
	a, _ := json.Marshal(append([]string{"--name", name, "--call-log", calls}, args...))
	return fmt.Sprintf("server %q {\n  command = %q\n  args = %s\n  %s\n}\n", name, testbin.Path(t, "mcp-demo"), a, body)
}

// newFixture writes a config (top is HCL before the server blocks) and
// attaches a gateway to a started host for it. With servers empty, one
// mcp-demo server "demo" is configured.
func newFixture(t testing.TB, top string, servers ...string) *fixture {
	t.Helper()
	return newFixtureWith(t, fixtureOptions{}, top, servers...)
}

// fixtureOptions tune a fixture's gateway and manager.
type fixtureOptions struct {
	gateway gateway.Options // a nil Logger is the test log
	restart manager.RestartPolicy
	// noAuditLog leaves audit_log out of the config, so results are
	// not serialized for events.
	noAuditLog bool
	// hostLogger replaces the host's test log (nil keeps it).
	hostLogger hclog.Logger
	// sinks receive the host's events from before its servers start.
	sinks []events.Sink
	// readOnlyConfig makes the config file read-only (mode 0444), as a
	// ConfigMap mount is.
	readOnlyConfig bool
	// limitClock is the clock of serve's limit blocks (nil = time.Now).
	limitClock func() time.Time
}

// newFixtureWith is newFixture with options.
func newFixtureWith(t testing.TB, opts fixtureOptions, top string, servers ...string) *fixture {
	t.Helper()
	f, err := startFixture(t, opts, top, servers...)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// startFixture is newFixtureWith that returns gateway.New's error.
func startFixture(t testing.TB, opts fixtureOptions, top string, servers ...string) (*fixture, error) {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{dir: dir, calls: filepath.Join(dir, "calls.jsonl"), cfgPath: filepath.Join(dir, "toolgate.hcl"), noAudit: opts.noAuditLog}
	if len(servers) == 0 {
		servers = []string{demoServer(t, "demo", f.calls, "")}
	}
	cfg := f.configure(t, top, servers...)
	if opts.readOnlyConfig {
		if err := os.Chmod(f.cfgPath, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	log := hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: testWriter{t}})
	if opts.hostLogger != nil {
		log = opts.hostLogger
	}
	if opts.gateway.Logger == nil {
		opts.gateway.Logger = log
	}
	h, err := host.New(cfg, host.Options{
		Logger:     log,
		Serving:    true,
		Manager:    manager.Options{RelistDelay: 10 * time.Millisecond, Restart: opts.restart},
		Sinks:      opts.sinks,
		LimitClock: opts.limitClock,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.h = h
	t.Cleanup(func() {
		if f.gw != nil {
			if err := f.gw.Close(); err != nil {
				t.Errorf("closing gateway: %v", err)
			}
		}
		if err := h.Close(); err != nil {
			t.Errorf("closing host: %v", err)
		}
	})
	h.Start(t.Context())
	if _, err := h.Manager.WaitStartup(t.Context()); err != nil {
		t.Fatal(err)
	}
	f.gw, err = gateway.New(h, opts.gateway)
	return f, err
}

// configure writes the fixture's config file (top is HCL before the
// server blocks) and loads it.
func (f *fixture) configure(t testing.TB, top string, servers ...string) *config.Config {
	t.Helper()
	src := top + "\n" + strings.Join(servers, "\n")
	if !f.noAudit {
		src = "audit_log = \"audit.jsonl\"\n" + src
	}
	if err := os.WriteFile(f.cfgPath, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load(f.cfgPath, config.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return cfg
}

// testWriter sends logs to the test log, so failures show them.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// httpServer serves the gateway on a loopback test listener.
func (f *fixture) httpServer(t testing.TB, serve config.Serve, lookup func(string) (string, bool)) *httptest.Server {
	t.Helper()
	e, err := gateway.NewEndpoint(serve, "127.0.0.1:0", lookup)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f.gw.Handler(e))
	t.Cleanup(srv.Close)
	return srv
}

// connectHTTP connects a go-sdk client over Streamable HTTP with the
// initialize handshake, which negotiates 2025-11-25: a stateful session,
// whose client is asked for input with elicitation/create inside the
// call.
func (f *fixture) connectHTTP(t *testing.T, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return f.connectTo(t, f.httpServer(t, config.Serve{}, nil), opts)
}

// connectHTTPModern connects a go-sdk client over Streamable HTTP as it
// does by default: server/discover, then 2026-07-28 requests without a
// session, whose client is asked for input with input-required results.
func (f *fixture) connectHTTPModern(t *testing.T, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return f.connectToVersion(t, f.httpServer(t, config.Serve{}, nil), opts, "")
}

// connectTo connects a go-sdk client to srv over Streamable HTTP at
// 2025-11-25.
func (f *fixture) connectTo(t testing.TB, srv *httptest.Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return f.connectToVersion(t, srv, opts, "2025-11-25")
}

// connectToVersion connects a go-sdk client to srv over Streamable HTTP
// asking for version ("" = go-sdk's default, 2026-07-28 with discover).
func (f *fixture) connectToVersion(t testing.TB, srv *httptest.Server, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, opts)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL + gateway.Path, HTTPClient: &http.Client{Transport: tr}},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// connectStdio connects a go-sdk client to a session served as over
// stdio. In-memory transports negotiate 2026-07-28: the client is asked
// for input with input-required results and retries.
func (f *fixture) connectStdio(t *testing.T, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return f.connectStdioWith(t, opts, nil)
}

// connectStdioWith is connectStdio with session options: a
// ProtocolVersion of 2025-11-25 or older is a client of today's stdio
// hosts, which initialize instead of discovering.
func (f *fixture) connectStdioWith(t *testing.T, opts *mcp.ClientOptions, session *mcp.ClientSessionOptions) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { served <- f.gw.ServeStdio(ctx, st) }()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, opts)
	cs, err := c.Connect(t.Context(), ct, session)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		cancel()
		if err := <-served; err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	})
	return cs
}

// protocols are the two ways an upstream client is asked for input: the
// name is the transport and the protocol version it negotiates.
var protocols = []struct {
	name    string
	version string
	connect func(*fixture, *testing.T, *mcp.ClientOptions) *mcp.ClientSession
}{
	{"http", "2025-11-25", (*fixture).connectHTTP},
	{"stdio", "2026-07-28", (*fixture).connectStdio},
	{"http-2026", "2026-07-28", (*fixture).connectHTTPModern},
}

// serverCalls returns the tools mcp-demo received, in order.
func serverCalls(t *testing.T, path string) []string {
	t.Helper()
	return callLog(t, path, "call")
}

func callLog(t *testing.T, path, event string) []string {
	t.Helper()
	fh, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []string
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		var rec struct{ Event, Tool string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("call log line %q: %v", sc.Text(), err)
		}
		if rec.Event == event {
			out = append(out, rec.Tool)
		}
	}
	return out
}

// waitEnd returns the first tool_call_end of kind that rec had not
// recorded among its first seen events, once it is in. Bounded, so a door
// that records nothing fails instead of hanging.
func waitEnd(t *testing.T, rec *events.Recorder, kind string, seen int) events.ToolCallEnd {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	e, err := rec.WaitFor(ctx, func(e events.Event) bool {
		end, ok := e.(events.ToolCallEnd)
		return ok && end.Call.Kind == kind && !slices.ContainsFunc(rec.Events()[:seen], func(o events.Event) bool {
			old, ok := o.(events.ToolCallEnd)
			return ok && old.CallID == end.CallID
		})
	})
	if err != nil {
		t.Fatalf("no tool_call_end of kind %s: %v", kind, err)
	}
	return e.(events.ToolCallEnd)
}

// text returns the text of a result's first content block.
func text(res *mcp.CallToolResult) string {
	if res == nil || len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return fmt.Sprintf("%T", res.Content[0])
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	return res
}
