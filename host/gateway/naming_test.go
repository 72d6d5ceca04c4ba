package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/gateway"
	"github.com/toolgate/toolgate/host/manager"
)

func TestPrefixFalseServesRawNames(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t, "",
		demoServer(t, "solo", filepath.Join(dir, "solo"), "prefix = false\n  default_tools_approval_mode = \"approve\"", "--colliding-names", "--no-default-tools"),
		demoServer(t, "demo", filepath.Join(dir, "demo"), ""))
	cs := f.connectHTTP(t, nil)
	got := names(t, cs)
	for _, want := range []string{"tool-name", "tool_name", "tool.name", "mcp__demo__echo"} {
		if !slices.Contains(got, want) {
			t.Errorf("%s is not served; got %v", want, got)
		}
	}
	if res := call(t, cs, "tool.name", nil); res.IsError {
		t.Errorf("calling tool.name: %s", text(res))
	}
	if calls := serverCalls(t, filepath.Join(dir, "solo")); !slices.Equal(calls, []string{"tool.name"}) {
		t.Errorf("solo received %v", calls)
	}
}

func TestUpstreamNameConflictsAreConfigErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name    string
		servers []string
		want    []string
	}{
		{
			name: "two servers without prefix",
			servers: []string{
				demoServer(t, "alpha", filepath.Join(dir, "a"), "prefix = false"),
				demoServer(t, "beta", filepath.Join(dir, "b"), "prefix = false"),
			},
			want: []string{`upstream tool name "echo" is claimed by tool "echo" of server "alpha"`, `and by tool "echo" of server "beta"`, `set prefix = true`},
		},
		{
			name:    "a name MCP does not allow",
			servers: []string{demoServer(t, "long", filepath.Join(dir, "l"), "prefix = false", "--long-names", "--no-default-tools")},
			want:    []string{"MCP does not allow", "at most 128 characters", `set prefix = true in the server "long" block`},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := startFixture(t, fixtureOptions{}, "", tt.servers...)
			if !errors.Is(err, gateway.ErrToolName) {
				t.Fatalf("Attach = %v, want ErrToolName", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestANewcomerNeverTakesAServedName: a reload that adds a server whose
// tools collide with served ones leaves the newcomer out and keeps the
// working tool, saying so.
func TestANewcomerNeverTakesAServedName(t *testing.T) {
	dir := t.TempDir()
	conflict := make(chan string, 8)
	log := hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: lineSignal{t, "is still served under it, as before", conflict}})
	alpha := demoServer(t, "alpha", filepath.Join(dir, "a"), "prefix = false")
	f := newFixtureWith(t, fixtureOptions{gateway: gateway.Options{Logger: log}}, "", alpha)
	cs := f.connectHTTP(t, nil)

	f.addBeta(t, alpha, filepath.Join(dir, "b"), conflict)
	if res := callSettled(t, cs, "echo", map[string]any{"text": "still here"}); res.IsError {
		t.Fatalf("echo after the reload: %s", text(res))
	}
	if calls := serverCalls(t, filepath.Join(dir, "a")); !slices.Equal(calls, []string{"echo"}) {
		t.Errorf("alpha received %v, want the echo", calls)
	}
	if calls := serverCalls(t, filepath.Join(dir, "b")); len(calls) > 0 {
		t.Errorf("beta received %v", calls)
	}
}

// addBeta reloads the fixture with server beta, whose tools claim the
// names of alpha's, and waits until the gateway reports the conflict.
func (f *fixture) addBeta(t *testing.T, alpha, calls string, conflict <-chan string) {
	t.Helper()
	f.h.Apply(f.configure(t, "", alpha, demoServer(t, "beta", calls, "prefix = false")))
	select {
	case <-conflict:
	case <-time.After(time.Minute):
		t.Fatal("the gateway never reported the conflict beta brought")
	}
}

// callSettled calls a tool, calling again while the session has not yet
// caught up with the catalog: the call was prepared on the old one, or
// its server is back but the session's list is not yet.
func callSettled(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res := call(t, cs, name, args)
	for range 200 {
		if !res.IsError || !strings.Contains(text(res), "catalog changed") && !strings.Contains(text(res), "not ready") {
			break
		}
		res = call(t, cs, name, args)
	}
	return res
}

// TestANameWaitsForItsHolderToRestart: while the server holding a name is
// down and restarting, a newcomer claiming the name does not take it,
// and the holder has it back when it returns.
func TestANameWaitsForItsHolderToRestart(t *testing.T) {
	dir := t.TempDir()
	conflict := make(chan string, 8)
	log := hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: lineSignal{t, "is still served under it, as before", conflict}})
	alpha := demoServer(t, "alpha", filepath.Join(dir, "a"), "prefix = false", "--crash-after", "1")
	f := newFixtureWith(t, fixtureOptions{gateway: gateway.Options{Logger: log},
		restart: manager.RestartPolicy{Initial: 10 * time.Millisecond}}, "", alpha)
	back := make(chan struct{}, 8)
	f.h.Bus.AddSink(events.SinkFunc(func(e events.Event) {
		if s, ok := e.(events.ServerState); ok && s.Server == "alpha" && s.Status == events.StatusReady && s.Restarts > 0 {
			back <- struct{}{}
		}
	}))
	cs := f.connectHTTP(t, nil)

	f.addBeta(t, alpha, filepath.Join(dir, "b"), conflict)
	for i := range 2 { // alpha exits after each call and comes back
		if res := callSettled(t, cs, "echo", map[string]any{"text": "x"}); res.IsError {
			t.Fatalf("echo %d: %s", i, text(res))
		}
		select {
		case <-back:
		case <-time.After(time.Minute):
			t.Fatal("alpha did not come back")
		}
	}
	if calls := serverCalls(t, filepath.Join(dir, "a")); !slices.Equal(calls, []string{"echo", "echo"}) {
		t.Errorf("alpha received %v, want both echos", calls)
	}
	if calls := serverCalls(t, filepath.Join(dir, "b")); len(calls) > 0 {
		t.Errorf("beta received %v while alpha was restarting", calls)
	}
}

func TestToolSearchRevealsToolsToItsSessionOnly(t *testing.T) {
	f := newFixture(t, "exposure {\n  mode = \"deferred\"\n}\n")
	changed := make(chan struct{}, 8)
	cs := f.connectHTTP(t, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	other := f.connectHTTP(t, nil)
	if got := names(t, cs); !slices.Equal(got, []string{"tool_search"}) {
		t.Fatalf("initial list = %v, want only tool_search", got)
	}
	res := call(t, cs, "tool_search", map[string]any{"query": "echo the same text"})
	var found struct {
		Tools []struct {
			Tools []struct{ Name string }
		}
	}
	if err := json.Unmarshal([]byte(text(res)), &found); err != nil || len(found.Tools) == 0 {
		t.Fatalf("tool_search result %q: %v", text(res), err)
	}
	// Found tools can be called at once, before any re-listing: clients
	// that ignore list_changed still reach them.
	if got := text(call(t, cs, "mcp__demo__echo", map[string]any{"text": "hi"})); got != "hi" {
		t.Errorf("echo = %q", got)
	}
	deadline := time.After(30 * time.Second)
	for !slices.Contains(names(t, cs), "mcp__demo__echo") {
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("echo never listed after tool_search: %v", names(t, cs))
		}
	}
	if got := names(t, other); !slices.Equal(got, []string{"tool_search"}) {
		t.Errorf("another session lists %v; found tools belong to the session that searched", got)
	}
}
