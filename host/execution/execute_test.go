package execution_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/execution"
	"github.com/toolgate/toolgate/host/mcpclient"
)

// fakeCaller is a function-field Caller for unit tests.
type fakeCaller struct {
	CallToolF func(ctx context.Context, server, tool string, args any, meta mcp.Meta, opts mcpclient.CallOptions) (*mcp.CallToolResult, error)
}

func (f *fakeCaller) CallTool(ctx context.Context, server, tool string, args any, meta mcp.Meta, opts mcpclient.CallOptions) (*mcp.CallToolResult, error) {
	return f.CallToolF(ctx, server, tool, args, meta, opts)
}

func returning(res *mcp.CallToolResult, err error) *fakeCaller {
	return &fakeCaller{CallToolF: func(context.Context, string, string, any, mcp.Meta, mcpclient.CallOptions) (*mcp.CallToolResult, error) {
		return res, err
	}}
}

// stepClock returns t0, t0+step, t0+2*step, … on successive calls.
func stepClock(t0 time.Time, step time.Duration) func() time.Time {
	var mu sync.Mutex
	next := t0
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now := next
		next = next.Add(step)
		return now
	}
}

var (
	t0       = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	slowCall = events.Call{CallID: "c1", SessionID: "s1", Server: "demo", Tool: "slow", ModelName: "mcp__demo__slow"}
)

func newExecutor(caller execution.Caller, rec *events.Recorder) *execution.Executor {
	return execution.New(executorOptions(caller, rec))
}

func executorOptions(caller execution.Caller, rec *events.Recorder) execution.Options {
	opts := execution.Options{
		Caller:      caller,
		Model:       execution.Model{OutputBudgetBytes: 4000},
		Permissions: "read-only",
		Cwd:         "/srv/work",
		Now:         stepClock(t0, 1500*time.Millisecond),
		// The tests pin the recorded projection; see
		// TestResultsAreRecordedOnlyWhenAsked for the default.
		RecordResults: true,
	}
	return opts
}

func TestExecuteSendsTheCallWithMeta(t *testing.T) {
	type seen struct {
		server, tool string
		args         any
		meta         mcp.Meta
		timeout      time.Duration
		ctxValue     any
	}
	type ctxKey struct{}
	tests := []struct {
		name     string
		args     json.RawMessage
		caps     *mcp.ServerCapabilities
		callMeta bool // the server's call_meta
		want     seen
	}{
		{
			name: "arguments and sandbox state",
			args: json.RawMessage(`{"ms":5}`),
			caps: &mcp.ServerCapabilities{Experimental: map[string]any{"toolgate/sandbox-state": map[string]any{}}},
			want: seen{
				server: "demo", tool: "slow", args: json.RawMessage(`{"ms":5}`),
				meta: mcp.Meta{"callId": "c1", "threadId": "s1",
					"toolgate/sandbox-state": map[string]any{"permissions": "read-only", "cwd": "/srv/work"}},
				timeout: 7 * time.Second, ctxValue: "v",
			},
		},
		{
			// nil arguments must reach the manager as an untyped nil, which
			// go-sdk sends as {} rather than null; and without call_meta
			// or a sandbox capability, no _meta at all.
			name: "no arguments, no capabilities",
			want: seen{server: "demo", tool: "slow", args: nil, meta: nil,
				timeout: 7 * time.Second, ctxValue: "v"},
		},
		{
			name:     "call_meta",
			callMeta: true,
			want: seen{server: "demo", tool: "slow", args: nil, meta: mcp.Meta{"callId": "c1", "threadId": "s1"},
				timeout: 7 * time.Second, ctxValue: "v"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got seen
			caller := &fakeCaller{CallToolF: func(ctx context.Context, server, tool string, args any, meta mcp.Meta, opts mcpclient.CallOptions) (*mcp.CallToolResult, error) {
				got = seen{server: server, tool: tool, args: args, meta: meta, timeout: opts.Timeout, ctxValue: ctx.Value(ctxKey{})}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			}}
			ctx := context.WithValue(t.Context(), ctxKey{}, "v")
			opts := executorOptions(caller, nil)
			if tt.callMeta {
				opts.CallMeta = map[string]bool{"demo": true}
			}
			res := execution.New(opts).Execute(ctx, execution.Request{
				Call: slowCall, Arguments: tt.args, Capabilities: tt.caps, Timeout: 7 * time.Second,
			})
			if res.Status != events.CallCompleted || res.Err != nil {
				t.Fatalf("status %s err %v", res.Status, res.Err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(seen{})); diff != "" {
				t.Errorf("what the caller saw (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExecuteOutcomes(t *testing.T) {
	timeout := &mcpclient.TimeoutError{After: 200 * time.Millisecond}
	closed := errors.New(`calling tool "slow": connection closed: EOF`)
	failedResult := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "disk full"}}}
	okResult := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}
	const header = "Wall time: 1.5000 seconds\nOutput:\n"
	tests := []struct {
		name       string
		caller     *fakeCaller
		wantStatus string
		wantRaw    *mcp.CallToolResult
		wantText   string
		wantErr    string // "" = Result.Err nil
		wantResult string // the event's projected result
	}{
		{
			name:       "completed",
			caller:     returning(okResult, nil),
			wantStatus: events.CallCompleted,
			wantRaw:    okResult,
			wantText:   header + `[{"type":"text","text":"done"}]`,
			wantResult: `{"content":[{"type":"text","text":"done"}]}`,
		},
		{
			name:       "isError result fails the call but is no transport error",
			caller:     returning(failedResult, nil),
			wantStatus: events.CallFailed,
			wantRaw:    failedResult,
			wantText:   header + `[{"type":"text","text":"disk full"}]`,
			wantResult: `{"content":[{"type":"text","text":"disk full"}],"isError":true}`,
		},
		{
			name:       "timeout",
			caller:     returning(nil, timeout),
			wantStatus: events.CallFailed,
			wantText:   header + "tool call error: tool call failed for `demo/slow`: timed out awaiting tools/call after 0.2s",
			wantErr:    "tool call failed for `demo/slow`: timed out awaiting tools/call after 0.2s",
			wantResult: `{"error":"tool call failed for ` + "`demo/slow`" + `: timed out awaiting tools/call after 0.2s"}`,
		},
		{
			name:       "transport error",
			caller:     returning(nil, closed),
			wantStatus: events.CallFailed,
			wantText:   header + "tool call error: tool call failed for `demo/slow`: calling tool \"slow\": connection closed: EOF",
			wantErr:    "tool call failed for `demo/slow`: calling tool \"slow\": connection closed: EOF",
			wantResult: `{"error":"tool call failed for ` + "`demo/slow`" + `: calling tool \"slow\": connection closed: EOF"}`,
		},
		{
			name:       "a result alongside an error is dropped",
			caller:     returning(okResult, closed),
			wantStatus: events.CallFailed,
			wantText:   header + "tool call error: tool call failed for `demo/slow`: calling tool \"slow\": connection closed: EOF",
			wantErr:    "tool call failed for `demo/slow`: calling tool \"slow\": connection closed: EOF",
			wantResult: `{"error":"tool call failed for ` + "`demo/slow`" + `: calling tool \"slow\": connection closed: EOF"}`,
		},
		{
			name:       "neither result nor error",
			caller:     returning(nil, nil),
			wantStatus: events.CallFailed,
			wantText:   header + "tool call error: tool call failed for `demo/slow`: the connection manager returned neither a result nor an error",
			wantErr:    "tool call failed for `demo/slow`: the connection manager returned neither a result nor an error",
			wantResult: `{"error":"tool call failed for ` + "`demo/slow`" + `: the connection manager returned neither a result nor an error"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &events.Recorder{}
			res := newExecutor(tt.caller, rec).Execute(t.Context(), execution.Request{Call: slowCall})

			if res.Status != tt.wantStatus {
				t.Errorf("Status = %s, want %s", res.Status, tt.wantStatus)
			}
			if res.Raw != tt.wantRaw {
				t.Errorf("Raw = %v, want %v", res.Raw, tt.wantRaw)
			}
			if res.Wall != 1500*time.Millisecond {
				t.Errorf("Wall = %v, want 1.5s by the injected clock", res.Wall)
			}
			if res.Output().Text != tt.wantText {
				t.Errorf("model text\n got %q\nwant %q", res.Output().Text, tt.wantText)
			}
			gotErr := ""
			if res.Err != nil {
				gotErr = res.Err.Error()
			}
			if gotErr != tt.wantErr {
				t.Errorf("Err = %q, want %q", gotErr, tt.wantErr)
			}

			end := events.ToolCallEnd{At: res.Finished, Call: slowCall, Status: res.Status, Duration: res.Wall,
				Result: res.EventResult, Error: res.EventError}
			want := events.ToolCallEnd{
				At:       t0.Add(1500 * time.Millisecond),
				Call:     slowCall,
				Status:   tt.wantStatus,
				Duration: 1500 * time.Millisecond,
				Result:   json.RawMessage(tt.wantResult),
				Error:    tt.wantErr,
			}
			if diff := cmp.Diff(want, end); diff != "" {
				t.Errorf("tool_call_end (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExecuteTimeoutErrorIsMatchable(t *testing.T) {
	res := newExecutor(returning(nil, &mcpclient.TimeoutError{After: time.Second}), nil).
		Execute(t.Context(), execution.Request{Call: slowCall})
	var te *mcpclient.TimeoutError
	if !errors.As(res.Err, &te) || te.After != time.Second {
		t.Fatalf("Err = %v, want a *mcpclient.TimeoutError inside", res.Err)
	}
	var ce *execution.CallError
	if !errors.As(res.Err, &ce) || ce.Server != "demo" || ce.Tool != "slow" {
		t.Fatalf("Err = %#v, want a *CallError naming the route", res.Err)
	}
	if !errors.Is(res.Err, context.DeadlineExceeded) {
		t.Error("a timeout should still match context.DeadlineExceeded")
	}
}

func TestExecuteWallTimeIncludesTheWaitBeforeIt(t *testing.T) {
	// The call entered the host 10 s before the clock's first reading,
	// which Execute takes once the answer arrives (Started is set, so it
	// never reads the clock before the call).
	clock := stepClock(t0, 1500*time.Millisecond)
	e := execution.New(execution.Options{Caller: returning(&mcp.CallToolResult{}, nil), Now: clock})
	res := e.Execute(t.Context(), execution.Request{Call: slowCall, Started: t0.Add(-10 * time.Second)})
	if want := 10 * time.Second; res.Wall != want {
		t.Fatalf("Wall = %v, want %v", res.Wall, want)
	}
	if want := "Wall time: 10.0000 seconds\nOutput:\n[]"; res.Output().Text != want {
		t.Errorf("model text %q, want %q", res.Output().Text, want)
	}
}

func TestExecutePassesProgressThrough(t *testing.T) {
	caller := &fakeCaller{CallToolF: func(_ context.Context, _, _ string, _ any, _ mcp.Meta, opts mcpclient.CallOptions) (*mcp.CallToolResult, error) {
		if opts.OnProgress == nil {
			return nil, errors.New("no progress callback reached the caller")
		}
		for i := 1; i <= 3; i++ {
			opts.OnProgress(&mcp.ProgressNotificationParams{Progress: float64(i), Total: 3})
		}
		return &mcp.CallToolResult{}, nil
	}}
	var got []float64
	res := newExecutor(caller, nil).Execute(t.Context(), execution.Request{
		Call:       slowCall,
		OnProgress: func(p *mcp.ProgressNotificationParams) { got = append(got, p.Progress) },
	})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if diff := cmp.Diff([]float64{1, 2, 3}, got); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
}

func TestExecuteProjectsMediaForTheModel(t *testing.T) {
	caller := returning(imageResult(), nil)
	res := execution.New(execution.Options{Caller: caller, Model: execution.Model{ImageInput: true}, Now: stepClock(t0, time.Second)}).
		Execute(t.Context(), execution.Request{Call: slowCall})
	if len(res.Output().Items) != 3 || res.Output().Items[1].URL != pngURL {
		t.Fatalf("items = %+v, want the image as a data URL", res.Output().Items)
	}
}

func TestNewWithoutCallerPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("New without a Caller did not panic")
		}
	}()
	execution.New(execution.Options{})
}

func TestResultsAreRecordedOnlyWhenAsked(t *testing.T) {
	for _, record := range []bool{false, true} {
		e := execution.New(execution.Options{Caller: returning(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil),
			RecordResults: record})
		res := e.Execute(t.Context(), execution.Request{Call: slowCall})
		if (res.EventResult != nil) != record {
			t.Errorf("RecordResults=%v: EventResult %s", record, res.EventResult)
		}
	}
}
