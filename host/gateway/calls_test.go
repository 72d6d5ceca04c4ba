package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/manager"
	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/internal/testwait"
)

// direct connects a go-sdk client straight to a fresh mcp-demo, at the
// protocol version the host negotiates with it, for comparisons.
func direct(t *testing.T, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := procwatch.DieWithTest(exec.Command(testbin.Path(t, "mcp-demo"), args...))
	c := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func TestToolsAreListedAsTheServerListsThem(t *testing.T) {
	f := newFixture(t, "")
	up := f.connectHTTP(t, nil)
	got := map[string]*mcp.Tool{}
	for tool, err := range up.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		got[tool.Name] = tool
	}
	n := 0
	for tool, err := range direct(t, "--name", "demo").Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		served, ok := got["mcp__demo__"+tool.Name]
		if !ok {
			t.Errorf("%s is not served upstream", tool.Name)
			continue
		}
		want := *tool
		want.Name = served.Name
		if diff := cmp.Diff(wire(t, &want), wire(t, served)); diff != "" {
			t.Errorf("%s differs upstream (-direct +gateway):\n%s", tool.Name, diff)
		}
	}
	if n == 0 || len(got) != n {
		t.Errorf("gateway serves %d tools, the server lists %d", len(got), n)
	}
}

func TestResultsArriveAsTheServerSentThem(t *testing.T) {
	f := newFixture(t, "")
	up := f.connectHTTP(t, nil)
	dc := direct(t, "--name", "demo")
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"echo", map[string]any{"text": "hi"}},
		{"add", map[string]any{"a": 2, "b": 3}},
		{"image", nil}, {"audio", nil}, {"resource_link", nil}, {"embedded_resource", nil},
		{"structured", nil}, {"mixed", nil},
		{"fail", map[string]any{"message": "broken on purpose"}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			want, err := dc.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil {
				t.Fatal(err)
			}
			got := call(t, up, "mcp__demo__"+tc.tool, tc.args)
			if diff := cmp.Diff(wire(t, want), wire(t, got)); diff != "" {
				t.Errorf("result differs (-direct +gateway):\n%s", diff)
			}
		})
	}
}

func TestProgressReachesTheCallerWithItsToken(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			f := newFixture(t, "")
			progress := make(chan *mcp.ProgressNotificationParams, 16)
			cs := p.connect(f, t, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
				progress <- r.Params
			}})
			params := &mcp.CallToolParams{Name: "mcp__demo__progress", Arguments: map[string]any{"steps": 3}}
			params.SetProgressToken("upstream-token-7")
			if _, err := cs.CallTool(t.Context(), params); err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 3; i++ {
				n := testwait.Recv(t, progress, "progress notification %d of 3", i)
				if n.ProgressToken != "upstream-token-7" || n.Progress != float64(i) {
					t.Errorf("notification %d = token %v progress %v", i, n.ProgressToken, n.Progress)
				}
			}
		})
	}
}

// TestProgressFollowsTheRetry: a 2026-07-28 client asked for approval
// comes back with a new request and a new progress token; what the call
// reports afterwards belongs to that request.
func TestProgressFollowsTheRetry(t *testing.T) {
	f := newFixture(t, "", demoServer(t, "demo", t.TempDir()+"/calls", "tool \"progress\" {\n    approval_mode = \"prompt\"\n  }"))
	progress := make(chan *mcp.ProgressNotificationParams, 16)
	cs := f.connectStdio(t, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}, // rounds by hand
		Capabilities:   &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			progress <- r.Params
		},
	})
	first := &mcp.CallToolParams{Name: "mcp__demo__progress", Arguments: map[string]any{"steps": 3}}
	first.SetProgressToken("round-1")
	res, err := cs.CallTool(t.Context(), first)
	if err != nil {
		t.Fatal(err)
	}
	if !res.NeedsInput() {
		t.Fatalf("the call was not held for approval: %v", text(res))
	}
	answers := mcp.InputResponseMap{}
	for key := range res.InputRequests {
		answers[key] = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}
	}
	retry := &mcp.CallToolParams{Name: first.Name, Arguments: first.Arguments, InputResponses: answers, RequestState: res.RequestState}
	retry.SetProgressToken("round-2")
	if res, err = cs.CallTool(t.Context(), retry); err != nil || res.IsError {
		t.Fatalf("the retry: %v %v", err, text(res))
	}
	for i := 1; i <= 3; i++ {
		select {
		case n := <-progress:
			if n.ProgressToken != "round-2" {
				t.Errorf("notification %d went to token %v, want the retry's round-2", i, n.ProgressToken)
			}
		case <-time.After(time.Minute):
			t.Fatalf("got %d of 3 progress notifications", i-1)
		}
	}
}

// TestCallLogMessagesReachOnlyTheirCaller: a log message a server sends
// while serving one client's call goes to that client, never to another
// session, even though the server's result follows it at once.
func TestCallLogMessagesReachOnlyTheirCaller(t *testing.T) {
	f := newFixture(t, "", demoServer(t, "demo", t.TempDir()+"/calls", "", "--log-messages"))
	const sentinel = "no call is running"
	connect := func() (*mcp.ClientSession, chan string) {
		got := make(chan string, 64)
		cs := f.connectHTTP(t, &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			got <- fmt.Sprint(r.Params.Data)
		}})
		if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatal(err)
		}
		return cs, got
	}
	a, toA := connect()
	_, toB := connect()
	const calls = 20
	for i := range calls {
		call(t, a, "mcp__demo__echo", map[string]any{"text": fmt.Sprint("a-", i)})
	}
	for i := range calls {
		select {
		case m := <-toA:
			if !strings.Contains(m, "echo") {
				t.Errorf("a got %q", m)
			}
		case <-time.After(time.Minute):
			t.Fatalf("a got %d of its %d calls' log messages", i, calls)
		}
	}
	// A message outside any call goes to every session, after whatever
	// was queued for it before.
	f.gw.BroadcastLog(&mcp.LoggingMessageParams{Level: "info", Logger: "demo", Data: sentinel})
	for {
		select {
		case m := <-toB:
			if m == sentinel {
				return
			}
			t.Errorf("b got a log message of a's calls: %q", m)
		case <-time.After(time.Minute):
			t.Fatal("b never got the message sent to every session")
		}
	}
}

func TestCancellingTheUpstreamRequestCancelsTheDownstreamCall(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			fifo, lines, stop, err := procwatch.LineFIFO(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(stop)
			f := newFixture(t, "", demoServer(t, "demo", fifo, ""))
			cs := p.connect(f, t, nil)

			ctx, cancel := context.WithCancel(t.Context())
			errc := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__demo__slow", Arguments: map[string]any{"ms": 60000}})
				errc <- err
			}()
			waitEvent(t, lines, "call", "slow")
			cancel()
			waitEvent(t, lines, "cancelled", "slow")
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Errorf("upstream call returned %v, want context.Canceled", err)
			}
		})
	}
}

// waitEvent reads call-log lines until one has the event and tool.
func waitEvent(t *testing.T, lines <-chan string, event, tool string) {
	t.Helper()
	for {
		line, ok := testwait.RecvOK(t, lines, "%s %s in the call log", event, tool)
		if !ok {
			t.Fatalf("call log closed before %s %s", event, tool)
		}
		var rec struct{ Event, Tool string }
		if err := json.Unmarshal([]byte(line), &rec); err == nil && rec.Event == event && rec.Tool == tool {
			return
		}
	}
}

func TestServerElicitationsReachTheUpstreamClient(t *testing.T) {
	for _, down := range []struct{ name, hcl string }{
		{"downstream_legacy", ""},
		{"downstream_2026-07-28", `protocol_version = "2026-07-28"`},
	} {
		for _, p := range protocols {
			t.Run(down.name+"/"+p.name, func(t *testing.T) {
				dir := t.TempDir()
				f := newFixture(t, "", demoServer(t, "demo", filepath.Join(dir, "calls"), down.hcl))
				a := &answerer{answers: []*mcp.ElicitResult{{Action: "accept", Content: map[string]any{"name": "Ada", "age": 36, "color": "green"}}}}
				cs := p.connect(f, t, &mcp.ClientOptions{ElicitationHandler: a.handler})
				res := call(t, cs, "mcp__demo__elicit", map[string]any{"message": "who are you?"})
				var out struct {
					Action  string
					Content map[string]any
				}
				if err := json.Unmarshal([]byte(text(res)), &out); err != nil {
					t.Fatalf("result %q: %v", text(res), err)
				}
				if out.Action != "accept" || out.Content["name"] != "Ada" {
					t.Errorf("the server got %+v", out)
				}
				prompts := a.prompts()
				if len(prompts) != 1 || !strings.Contains(prompts[0].Message, "who are you?") {
					t.Errorf("the client was asked %+v", prompts)
				}

				// The client declared form elicitation only: a URL
				// elicitation is declined without asking it.
				res = call(t, cs, "mcp__demo__elicit_url", map[string]any{"message": "sign in"})
				if !strings.Contains(text(res), `"action":"decline"`) {
					t.Errorf("URL elicitation: %s", text(res))
				}
				if n := len(a.prompts()); n != 1 {
					t.Errorf("the client was asked %d times, want 1", n)
				}

				// Both are requests of the pipeline, kind elicitation:
				// the forwarded one completed with the client's action,
				// the declined one denied, each begun and ended once.
				var begins int
				var ends []string
				for _, r := range readAudit(t, f.dir) {
					switch {
					case r.Kind != "elicitation":
					case r.Event == "tool_call_begin":
						begins++
					case r.Event == "tool_call_end":
						ends = append(ends, r.ModelName+"/"+r.Status+"/"+string(r.Result))
					}
				}
				if want := `mcp__demo__elicit/completed/{"action":"accept"},mcp__demo__elicit_url/denied/`; begins != 2 || strings.Join(ends, ",") != want {
					t.Errorf("audit log: %d elicitation begins, ends %v; want 2 and %s", begins, ends, want)
				}
			})
		}
	}
}

// TestToolsOfADownServerAnswerThatItIsDown: once a crashed server's
// tools are withdrawn (list_changed), calling one by name is a tool error
// that says the server is down, not "unknown tool".
func TestToolsOfADownServerAnswerThatItIsDown(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) { testToolsOfADownServer(t, p.connect) })
	}
}

func testToolsOfADownServer(t *testing.T, connect func(*fixture, *testing.T, *mcp.ClientOptions) *mcp.ClientSession) {
	f := newFixtureWith(t, fixtureOptions{restart: manager.RestartPolicy{Disabled: true}}, "",
		demoServer(t, "demo", t.TempDir()+"/calls", "", "--crash-after", "1"))
	changed := make(chan struct{}, 8)
	// A 2026-07-28 client hears of it on its subscriptions/listen stream.
	cs := connect(f, t, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}})
	call(t, cs, "mcp__demo__echo", map[string]any{"text": "last words"}) // then it exits
	select {
	case <-changed:
	case <-time.After(time.Minute):
		t.Fatal("the crashed server's tools were never withdrawn")
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__demo__echo", Arguments: map[string]any{"text": "hello?"}})
	if err != nil {
		t.Fatalf("a tool of a down server: %v, want a tool error", err)
	}
	if got := text(res); !res.IsError || !strings.Contains(got, `MCP server "demo" is failed`) {
		t.Errorf("result = isError %v %q, want an error saying the server is down", res.IsError, got)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__demo__never_was"}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("a name no server ever served: %v, want unknown tool", err)
	}
	later := f.connectHTTP(t, nil)
	if _, err := later.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__demo__echo", Arguments: map[string]any{"text": "?"}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("a session that never listed the tool: %v, want unknown tool", err)
	}
}

func TestUnknownToolsAndBadParamsAreProtocolErrors(t *testing.T) {
	f := newFixture(t, "")
	cs := f.connectHTTP(t, nil)
	for _, tc := range []struct {
		name string
		args any
	}{
		{"mcp__demo__nope", nil},
		{"mcp__demo__echo", []any{"not", "an", "object"}},
	} {
		_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.name, Arguments: tc.args})
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s %v: err = %v, want a JSON-RPC invalid params error", tc.name, tc.args, err)
		}
	}
	if got := serverCalls(t, f.calls); len(got) != 0 {
		t.Errorf("the server was contacted: %v", got)
	}
}

func TestDownstreamListChangesAreForwarded(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			f := newFixture(t, "", demoServer(t, "demo", filepath.Join(t.TempDir(), "calls"), `default_tools_approval_mode = "approve"`))
			changed := make(chan struct{}, 8)
			cs := p.connect(f, t, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				changed <- struct{}{}
			}})
			call(t, cs, "mcp__demo__mutate_tools", map[string]any{"add": []string{"late_tool"}})
			deadline := time.After(30 * time.Second)
			for !slices.Contains(names(t, cs), "mcp__demo__late_tool") {
				select {
				case <-changed:
				case <-deadline:
					t.Fatalf("late_tool never appeared upstream: %v", names(t, cs))
				}
			}
			if got := text(call(t, cs, "mcp__demo__late_tool", nil)); got != "ok" {
				t.Errorf("late_tool = %q", got)
			}
		})
	}
}

// wire is v as it goes on the wire, compared field by field.
func wire(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func names(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var out []string
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tool.Name)
	}
	return out
}

func TestPolicyNeverDeclinesServerElicitationsWithoutAsking(t *testing.T) {
	f := newFixture(t, "approval {\n  policy = \"never\"\n}\n")
	a := &answerer{answers: []*mcp.ElicitResult{{Action: "accept", Content: map[string]any{"name": "Ada"}}}}
	cs := f.connectHTTP(t, &mcp.ClientOptions{ElicitationHandler: a.handler})
	res := call(t, cs, "mcp__demo__elicit", map[string]any{"message": "who are you?"})
	if !strings.Contains(text(res), `"action":"decline"`) {
		t.Errorf("the server got %s", text(res))
	}
	if n := len(a.prompts()); n != 0 {
		t.Errorf("the client was asked %d times under policy never", n)
	}
}
