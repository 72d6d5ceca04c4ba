package execution_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/environment"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/execution"
	"github.com/toolgate/toolgate/host/launch"
	"github.com/toolgate/toolgate/host/manager"
	"github.com/toolgate/toolgate/host/mcpclient"
	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/testplugins/mcpdemo"
)

var headerRE = regexp.MustCompile(`^Wall time: \d+\.\d{4} seconds\nOutput:\n`)

// body strips the wall-time header, which varies from run to run.
func body(t *testing.T, text string) string {
	t.Helper()
	loc := headerRE.FindStringIndex(text)
	if loc == nil {
		t.Fatalf("model text lacks the wall-time header: %.120q", text)
	}
	return text[loc[1]:]
}

// demoManager starts a real manager with one mcp-demo server named "demo"
// that logs every call to a FIFO and declares both sandbox capabilities.
func demoManager(t *testing.T) (*manager.Manager, <-chan string) {
	t.Helper()
	logPath, lines, stop, err := procwatch.LineFIFO(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	srv := config.Server{
		Name:      "demo",
		Transport: config.TransportStdio,
		Command:   testbin.Path(t, "mcp-demo"),
		Args: []string{"--call-log", logPath,
			"--sandbox-capability", execution.SandboxStateCapability,
			"--sandbox-capability", execution.CodexSandboxStateCapability},
		Enabled:        true,
		Required:       true,
		StartupTimeout: 20 * time.Second,
		ToolTimeout:    20 * time.Second,
		Prefix:         true,
		DeclRange:      hcl.Range{Filename: "test.hcl", Start: hcl.Pos{Line: 1}},
	}
	cfg := &config.Config{Servers: []config.Server{srv}, Exposure: config.Exposure{NameLimit: 64}}
	m := manager.New(cfg, manager.Options{
		Events:       &events.Recorder{},
		Environments: environment.New(cfg, environment.Options{Local: launch.NewLocal(launch.LocalOptions{})}),
		LookupEnv:    os.LookupEnv,
	})
	// Cleanups run last-in first-out: the manager closes (and the server
	// exits) before the FIFO reader stops.
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("closing manager: %v", err)
		}
	})
	m.Start(t.Context())
	if _, err := m.WaitStartup(t.Context()); err != nil {
		t.Fatalf("starting mcp-demo: %v", err)
	}
	return m, lines
}

type callLogLine struct {
	Event     string          `json:"event"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      map[string]any  `json:"meta"`
}

// waitLog returns the first call-log line for tool with the given event.
func waitLog(t *testing.T, lines <-chan string, event, tool string) callLogLine {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("call log closed before a %s line for %s", event, tool)
			}
			var e callLogLine
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				t.Fatalf("call log line %q: %v", l, err)
			}
			if e.Event == event && e.Tool == tool {
				return e
			}
		case <-ctx.Done():
			t.Fatalf("mcp-demo never logged %s for %s", event, tool)
		}
	}
}

func TestExecuteAgainstMCPDemo(t *testing.T) {
	m, lines := demoManager(t)
	caps := m.Snapshot().Servers["demo"].Capabilities
	var results []execution.Result
	workdir := t.TempDir()
	executor := func(model execution.Model) *execution.Executor {
		return execution.New(execution.Options{
			Caller:        m,
			Model:         model,
			Permissions:   "workspace-write",
			Cwd:           workdir,
			RecordResults: true,
		})
	}
	calls := 0
	run := func(t *testing.T, model execution.Model, tool string, rawArgs string, timeout time.Duration) execution.Result {
		t.Helper()
		args, err := execution.ParseArguments([]byte(rawArgs))
		if err != nil {
			t.Fatal(err)
		}
		calls++
		res := executor(model).Execute(t.Context(), execution.Request{
			Call: events.Call{CallID: "call-" + tool, SessionID: "session-1", Server: "demo", Tool: tool,
				ModelName: "mcp__demo__" + tool},
			Arguments:    args,
			Capabilities: caps,
			Timeout:      timeout,
		})
		results = append(results, res)
		return res
	}

	t.Run("image for a text-only model", func(t *testing.T) {
		res := run(t, execution.Model{}, "image", "", 0)
		if res.Status != events.CallCompleted || res.Err != nil {
			t.Fatalf("status %s, err %v", res.Status, res.Err)
		}
		want := `[{"type":"text","text":"<image content omitted because you do not support image input>"},` +
			`{"type":"text","text":"a 2x2 PNG: red, green, blue, white"}]`
		if got := body(t, res.Output().Text); got != want {
			t.Errorf("model text body\n got %s\nwant %s", got, want)
		}
		if res.Output().Items != nil {
			t.Errorf("a text-only model got items: %+v", res.Output().Items)
		}
	})

	t.Run("image for a model that sees", func(t *testing.T) {
		res := run(t, execution.Model{ImageInput: true}, "image", "{}", 0)
		want := []execution.Item{
			{Type: "input_image", URL: "data:image/png;base64," + base64.StdEncoding.EncodeToString(mcpdemo.DemoPNG())},
			{Type: "input_text", Text: "a 2x2 PNG: red, green, blue, white"},
		}
		if len(res.Output().Items) != 3 || !headerRE.MatchString(res.Output().Items[0].Text+"\n") {
			t.Fatalf("items = %+v, want a header then the content", res.Output().Items)
		}
		if diff := cmp.Diff(want, res.Output().Items[1:]); diff != "" {
			t.Errorf("items (-want +got):\n%s", diff)
		}
	})

	t.Run("structured content is preferred", func(t *testing.T) {
		res := run(t, execution.Model{}, "structured", "", 0)
		if got, want := body(t, res.Output().Text), `{"city":"Paris","conditions":"sunny","temperature_c":21.5}`; got != want {
			t.Errorf("model text body = %s, want %s", got, want)
		}
	})

	t.Run("big output truncated at the budget", func(t *testing.T) {
		const budget = 2000
		res := run(t, execution.Model{OutputBudgetBytes: budget}, "big", `{"bytes": 50000}`, 0)
		text := res.Output().Text
		quoted, _ := json.Marshal(mcpdemo.BigText(50000))
		header := headerRE.FindString(text)
		full := header + `[{"type":"text","text":` + string(quoted) + `}]`
		checkTruncation(t, full, budget, text)
		if len(text) < budget-8 {
			t.Errorf("truncated output is %d bytes; the budget of %d should be used", len(text), budget)
		}
		// The audit copy is below 1 MiB, so it keeps the whole text.
		var ev struct {
			Content []struct{ Text string } `json:"content"`
		}
		end := lastEnd(t, results)
		if err := json.Unmarshal(end.Result, &ev); err != nil || len(ev.Content) != 1 || len(ev.Content[0].Text) != 50000 {
			t.Errorf("event result should hold all 50000 bytes (err %v)", err)
		}
	})

	t.Run("isError result fails the call", func(t *testing.T) {
		res := run(t, execution.Model{}, "fail", `{"message":"disk full"}`, 0)
		if res.Status != events.CallFailed || res.Err != nil || res.Raw == nil || !res.Raw.IsError {
			t.Fatalf("status %s, err %v, raw %+v", res.Status, res.Err, res.Raw)
		}
		if got := body(t, res.Output().Text); got != `[{"type":"text","text":"disk full"}]` {
			t.Errorf("model text body = %s", got)
		}
		if end := lastEnd(t, results); end.Status != events.CallFailed || end.Error != "" {
			t.Errorf("tool_call_end = %+v", end)
		}
	})

	t.Run("timeout cancels the server call", func(t *testing.T) {
		res := run(t, execution.Model{}, "slow", `{"ms": 60000}`, 200*time.Millisecond)
		var te *mcpclient.TimeoutError
		if !errors.As(res.Err, &te) || res.Status != events.CallFailed || res.Raw != nil {
			t.Fatalf("status %s, err %v, want a timeout", res.Status, res.Err)
		}
		const want = "tool call error: tool call failed for `demo/slow`: timed out awaiting tools/call after 0.2s"
		if got := body(t, res.Output().Text); got != want {
			t.Errorf("model text body = %q, want %q", got, want)
		}
		if res.Wall < 200*time.Millisecond || res.Wall > 15*time.Second {
			t.Errorf("wall = %v for a 200ms timeout", res.Wall)
		}
		end := lastEnd(t, results)
		if end.Error != "tool call failed for `demo/slow`: timed out awaiting tools/call after 0.2s" {
			t.Errorf("tool_call_end error = %q", end.Error)
		}

		// The server saw the call with our _meta, then the cancellation.
		call := waitLog(t, lines, "call", "slow")
		wantMeta := map[string]any{
			"callId":                   "call-slow",
			"threadId":                 "session-1",
			"toolgate/sandbox-state":   map[string]any{"permissions": "workspace-write", "cwd": workdir},
			"codex/sandbox-state-meta": map[string]any{"permissionProfile": "workspace-write", "sandboxCwd": "file://" + workdir},
		}
		for k, v := range wantMeta {
			if diff := cmp.Diff(v, call.Meta[k]); diff != "" {
				t.Errorf("_meta[%q] as the server received it (-want +got):\n%s", k, diff)
			}
		}
		for k := range call.Meta {
			if _, ours := wantMeta[k]; !ours && !strings.HasPrefix(k, "io.modelcontextprotocol/") && k != "progressToken" {
				t.Errorf("unexpected _meta key %q reached the server", k)
			}
		}
		if string(call.Arguments) != `{"ms":60000}` {
			t.Errorf("arguments on the wire = %s", call.Arguments)
		}
		waitLog(t, lines, "cancelled", "slow")
	})

	t.Run("every call has what its end event records", func(t *testing.T) {
		if len(results) != calls {
			t.Fatalf("%d calls, %d results", calls, len(results))
		}
		for _, r := range results {
			if r.Wall <= 0 || r.EventResult == nil {
				t.Errorf("result %+v lacks a duration or recorded result", r)
			}
		}
	})
}

// lastEnd is what the last call's tool_call_end records.
func lastEnd(t *testing.T, results []execution.Result) events.ToolCallEnd {
	t.Helper()
	if len(results) == 0 {
		t.Fatal("no call ran")
	}
	r := results[len(results)-1]
	return events.ToolCallEnd{At: r.Finished, Status: r.Status, Duration: r.Wall, Result: r.EventResult, Error: r.EventError}
}
