package mcpdemo

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// demoBinary is the mcp-demo binary built once for the subprocess tests.
var demoBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcp-demo-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "create temp dir:", err)
		os.Exit(1)
	}
	demoBinary = filepath.Join(dir, "mcp-demo")
	build := exec.Command("go", "build", "-o", demoBinary, "github.com/toolgate/toolgate/testplugins/mcp-demo")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build mcp-demo: %v\n%s", err, out)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { _ = os.RemoveAll(dir) }))
}

// Protocol versions the in-process tests run under: the legacy initialize
// handshake and go-sdk's default (2026-07-28 via server/discover).
const (
	legacyVersion = "2025-11-25"
	modernVersion = ""
)

var bothVersions = []struct {
	name    string
	version string
}{
	{"legacy", legacyVersion},
	{"modern", modernVersion},
}

// testTimeout bounds every wait in these tests; it is a safety net, never
// the thing a test waits for.
const testTimeout = 20 * time.Second

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func mustConfig(t *testing.T, args ...string) Config {
	t.Helper()
	var stderr strings.Builder
	cfg, err := ParseArgs(args, &stderr)
	if err != nil {
		t.Fatalf("ParseArgs(%q) = %v; stderr: %s", args, err, stderr.String())
	}
	return *cfg
}

type session struct {
	cs   *mcp.ClientSession
	demo *Demo
}

// connect runs a Demo in-process over go-sdk in-memory transports (through
// the same gate as stdio) and connects a client at version ("" = go-sdk
// default).
func connect(t *testing.T, cfg Config, env Env, copts *mcp.ClientOptions, version string) session {
	t.Helper()
	s, err := tryConnect(t, testCtx(t), cfg, env, copts, version)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return s
}

func tryConnect(t *testing.T, ctx context.Context, cfg Config, env Env, copts *mcp.ClientOptions, version string) (session, error) {
	t.Helper()
	d, err := New(cfg, env)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	st, ct := mcp.NewInMemoryTransports()
	ss, err := d.Server().Connect(ctx, d.GateTransport(st), nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	t.Cleanup(func() { _ = ss.Close(); _ = ss.Wait() })
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpdemo-test", Version: "1"}, copts)
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return session{}, err
	}
	t.Cleanup(func() { _ = cs.Close() })
	return session{cs: cs, demo: d}, nil
}

func (s session) call(t *testing.T, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := s.cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	return res
}

func (s session) tools(t *testing.T) []*mcp.Tool {
	t.Helper()
	var tools []*mcp.Tool
	for tool, err := range s.cs.Tools(testCtx(t), nil) {
		if err != nil {
			t.Fatalf("list tools: %v", err)
		}
		tools = append(tools, tool)
	}
	return tools
}

func toolNames(tools []*mcp.Tool) []string {
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	return names
}

func findTool(t *testing.T, tools []*mcp.Tool, name string) *mcp.Tool {
	t.Helper()
	for _, tool := range tools {
		if tool.Name == name {
			return tool
		}
	}
	t.Fatalf("tool %q not listed; have %v", name, toolNames(tools))
	return nil
}

// onlyText returns the text of a result made of exactly one text block.
func onlyText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("want 1 content block, got %d: %+v", len(res.Content), res.Content)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("want text content, got %T", res.Content[0])
	}
	return tc.Text
}

func decodeJSON[T any](t *testing.T, text string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("decode %q: %v", text, err)
	}
	return v
}

// lines collects newline-terminated writes (stderr, call log) and lets a
// test wait for one that matches, without polling.
type lines struct {
	mu      sync.Mutex
	partial string
	got     []string
	changed chan struct{}
}

func newLines() *lines { return &lines{changed: make(chan struct{})} }

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial += string(p)
	for {
		i := strings.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.got = append(l.got, l.partial[:i])
		l.partial = l.partial[i+1:]
	}
	close(l.changed)
	l.changed = make(chan struct{})
	return len(p), nil
}

func (l *lines) snapshot() ([]string, chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got...), l.changed
}

// waitFor returns the first line for which match is true.
func (l *lines) waitFor(t *testing.T, what string, match func(string) bool) string {
	t.Helper()
	deadline := time.NewTimer(testTimeout)
	defer deadline.Stop()
	for {
		got, changed := l.snapshot()
		for _, line := range got {
			if match(line) {
				return line
			}
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("no line %s within %v; got:\n%s", what, testTimeout, strings.Join(got, "\n"))
		}
	}
}

func (l *lines) waitContaining(t *testing.T, substr string) string {
	t.Helper()
	return l.waitFor(t, fmt.Sprintf("containing %q", substr), func(s string) bool { return strings.Contains(s, substr) })
}

func (l *lines) all() []string {
	got, _ := l.snapshot()
	return got
}
