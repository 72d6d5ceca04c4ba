package hook_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/hook"
	"github.com/toolgate/toolgate/sdk/plugintest"
)

// fakeHook is a Hook whose behaviour each test sets.
type fakeHook struct {
	pre    func(context.Context, hook.Request) (hook.PreToolUseResult, error)
	perm   func(context.Context, hook.Request) (hook.PermissionResult, error)
	post   func(context.Context, hook.Request, hook.ToolResult) (hook.PostToolUseResult, error)
	events []hook.Event
}

func (f *fakeHook) PreToolUse(ctx context.Context, r hook.Request) (hook.PreToolUseResult, error) {
	return f.pre(ctx, r)
}

func (f *fakeHook) PermissionRequest(ctx context.Context, r hook.Request) (hook.PermissionResult, error) {
	return f.perm(ctx, r)
}

func (f *fakeHook) PostToolUse(ctx context.Context, r hook.Request, res hook.ToolResult) (hook.PostToolUseResult, error) {
	return f.post(ctx, r, res)
}

func ptr[T any](v T) *T { return &v }

var fullRequest = hook.Request{
	Server:    "files",
	Tool:      "write_file",
	ModelName: "mcp__files__write_file",
	Arguments: json.RawMessage(`{"path":"a.txt","content":"hi"}`),
	Annotations: &sdk.Annotations{
		ReadOnly: false, Destructive: ptr(true), OpenWorld: ptr(false), Idempotent: true, Title: "Write",
	},
	ToolTitle:       "Write a file",
	ToolDescription: "Writes a file.",
	ApprovalMode:    "prompt",
	Policy:          "on-request",
	Permissions:     "workspace-write",
	SessionID:       "s-1",
	CallID:          "c-1",
	Cwd:             "/work",
	Caller: &sdk.Caller{Subject: "alice", Issuer: "https://login.example.com", ClientID: "ide", Email: "alice@example.com",
		Groups: []string{"admins"}, Scopes: []string{"mcp"}, Claims: map[string]string{"department": "R&D"}},
}

// everyEvent calls each event of h and returns the results.
func TestEventsRoundTrip(t *testing.T) {
	var mu sync.Mutex
	var seen []hook.Request
	var seenResult hook.ToolResult
	record := func(r hook.Request) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, r)
	}
	h := plugintest.Hook(t, &fakeHook{
		pre: func(_ context.Context, r hook.Request) (hook.PreToolUseResult, error) {
			record(r)
			return hook.Rewrite(json.RawMessage(`{"path":"b.txt"}`), "normalized path"), nil
		},
		perm: func(_ context.Context, r hook.Request) (hook.PermissionResult, error) {
			record(r)
			return hook.Deny("no writes today"), nil
		},
		post: func(_ context.Context, r hook.Request, res hook.ToolResult) (hook.PostToolUseResult, error) {
			record(r)
			seenResult = res
			return hook.PostToolUseResult{Note: "remember to commit"}, nil
		},
	})
	ctx := t.Context()

	pre, err := h.PreToolUse(ctx, fullRequest)
	if err != nil {
		t.Fatalf("PreToolUse: %v", err)
	}
	if diff := cmp.Diff(hook.Rewrite(json.RawMessage(`{"path":"b.txt"}`), "normalized path"), pre); diff != "" {
		t.Errorf("PreToolUse result (-want +got):\n%s", diff)
	}
	perm, err := h.PermissionRequest(ctx, fullRequest)
	if err != nil {
		t.Fatalf("PermissionRequest: %v", err)
	}
	if diff := cmp.Diff(hook.Deny("no writes today"), perm); diff != "" {
		t.Errorf("PermissionRequest result (-want +got):\n%s", diff)
	}
	result := hook.ToolResult{
		JSON:     json.RawMessage(`{"content":[{"type":"text","text":"ok"}]}`),
		IsError:  true,
		Error:    "timed out",
		Duration: 1500 * time.Millisecond,
	}
	post, err := h.PostToolUse(ctx, fullRequest, result)
	if err != nil {
		t.Fatalf("PostToolUse: %v", err)
	}
	if post.Note != "remember to commit" {
		t.Errorf("PostToolUse note = %q, want %q", post.Note, "remember to commit")
	}

	want := []hook.Request{fullRequest, fullRequest, fullRequest}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("requests the plugin saw (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(result, seenResult); diff != "" {
		t.Errorf("result the plugin saw (-want +got):\n%s", diff)
	}
}

func TestEmptyArgumentsArriveAsEmptyObject(t *testing.T) {
	got := make(chan hook.Request, 1)
	h := plugintest.Hook(t, &fakeHook{pre: func(_ context.Context, r hook.Request) (hook.PreToolUseResult, error) {
		got <- r
		return hook.Continue(), nil
	}})
	if _, err := h.PreToolUse(t.Context(), hook.Request{Server: "s", Tool: "t"}); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if string(r.Arguments) != "{}" || r.Annotations != nil {
		t.Errorf("plugin saw arguments %q and annotations %v, want {} and nil", r.Arguments, r.Annotations)
	}
}

func TestResultsOfEveryKind(t *testing.T) {
	for _, tt := range []struct {
		name string
		pre  hook.PreToolUseResult
		perm hook.PermissionResult
	}{
		{"continue and no decision", hook.Continue(), hook.NoDecision()},
		{"block and allow", hook.Block("not here"), hook.Allow("fine")},
		{"rewrite and deny", hook.Rewrite(json.RawMessage(` {"a":1}`), "why"), hook.Deny("no")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := plugintest.Hook(t, &fakeHook{
				pre: func(context.Context, hook.Request) (hook.PreToolUseResult, error) { return tt.pre, nil },
				perm: func(context.Context, hook.Request) (hook.PermissionResult, error) {
					return tt.perm, nil
				},
			})
			pre, err := h.PreToolUse(t.Context(), fullRequest)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.pre, pre); diff != "" {
				t.Errorf("PreToolUse (-want +got):\n%s", diff)
			}
			perm, err := h.PermissionRequest(t.Context(), fullRequest)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.perm, perm); diff != "" {
				t.Errorf("PermissionRequest (-want +got):\n%s", diff)
			}
		})
	}
}

// eventCalls runs the named event on h with ctx.
var eventCalls = map[hook.Event]func(context.Context, hook.Hook) error{
	hook.EventPreToolUse: func(ctx context.Context, h hook.Hook) error {
		_, err := h.PreToolUse(ctx, fullRequest)
		return err
	},
	hook.EventPermissionRequest: func(ctx context.Context, h hook.Hook) error {
		_, err := h.PermissionRequest(ctx, fullRequest)
		return err
	},
	hook.EventPostToolUse: func(ctx context.Context, h hook.Hook) error {
		_, err := h.PostToolUse(ctx, fullRequest, hook.ToolResult{})
		return err
	},
}

// every returns a fakeHook whose every event runs f.
func every(f func(ctx context.Context) error) *fakeHook {
	return &fakeHook{
		pre: func(ctx context.Context, _ hook.Request) (hook.PreToolUseResult, error) {
			return hook.Continue(), f(ctx)
		},
		perm: func(ctx context.Context, _ hook.Request) (hook.PermissionResult, error) {
			return hook.NoDecision(), f(ctx)
		},
		post: func(ctx context.Context, _ hook.Request, _ hook.ToolResult) (hook.PostToolUseResult, error) {
			return hook.PostToolUseResult{}, f(ctx)
		},
	}
}

func TestDeadlineReachesPlugin(t *testing.T) {
	for _, event := range hook.AllEvents {
		t.Run(string(event), func(t *testing.T) {
			deadlines := make(chan time.Time, 1)
			h := plugintest.Hook(t, every(func(ctx context.Context) error {
				d, ok := ctx.Deadline()
				if !ok {
					return errors.New("no deadline")
				}
				deadlines <- d
				return nil
			}))
			want := time.Now().Add(time.Minute)
			ctx, cancel := context.WithDeadline(t.Context(), want)
			defer cancel()
			if err := eventCalls[event](ctx, h); err != nil {
				t.Fatal(err)
			}
			got := <-deadlines
			// gRPC sends the remaining time, not the instant, rounded up:
			// the plugin's deadline is close to the host's, not equal.
			if d := got.Sub(want); d > 5*time.Second || d < -5*time.Second {
				t.Errorf("plugin's deadline = %v, want about %v", got, want)
			}
		})
	}
}

func TestHostCancellationCancelsPlugin(t *testing.T) {
	for _, event := range hook.AllEvents {
		t.Run(string(event), func(t *testing.T) {
			started := make(chan struct{})
			pluginErr := make(chan error, 1)
			h := plugintest.Hook(t, every(func(ctx context.Context) error {
				close(started)
				<-ctx.Done()
				pluginErr <- ctx.Err()
				return ctx.Err()
			}))
			ctx, cancel := context.WithCancel(t.Context())
			go func() {
				<-started
				cancel()
			}()
			err := eventCalls[event](ctx, h)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("host got %v, want context.Canceled", err)
			}
			if err := <-pluginErr; !errors.Is(err, context.Canceled) {
				t.Errorf("plugin's ctx ended with %v, want context.Canceled", err)
			}
		})
	}
}

func TestDeadlineExceededIsContextError(t *testing.T) {
	h := plugintest.Hook(t, every(func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}))
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	for _, event := range hook.AllEvents {
		if err := eventCalls[event](ctx, h); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: got %v, want context.DeadlineExceeded", event, err)
		}
	}
}

func TestPluginErrorsCrossTheWire(t *testing.T) {
	for _, tt := range []struct {
		name    string
		fail    func(ctx context.Context) error
		wantIs  error
		wantMsg string
	}{
		{
			name:    "plugin error keeps its message",
			fail:    func(context.Context) error { return errors.New("policy file unreadable: permission denied") },
			wantMsg: "policy file unreadable: permission denied",
		},
		{
			name:   "not configured",
			fail:   func(context.Context) error { return sdk.ErrNotConfigured },
			wantIs: sdk.ErrNotConfigured,
		},
		{
			name:    "panic becomes a plugin error",
			fail:    func(context.Context) error { panic("boom") },
			wantMsg: "plugin panicked: boom",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := plugintest.Hook(t, every(tt.fail))
			for _, event := range hook.AllEvents {
				err := eventCalls[event](t.Context(), h)
				if tt.wantIs != nil {
					if !errors.Is(err, tt.wantIs) {
						t.Errorf("%s: got %v, want %v", event, err, tt.wantIs)
					}
					continue
				}
				var pe *sdk.PluginError
				if !errors.As(err, &pe) || pe.Msg != tt.wantMsg {
					t.Errorf("%s: got %v, want *sdk.PluginError{%q}", event, err, tt.wantMsg)
				}
			}
		})
	}
}

func TestContractViolationsAreBadResponses(t *testing.T) {
	for _, tt := range []struct {
		name  string
		event hook.Event
		hook  *fakeHook
	}{
		{"unknown action", hook.EventPreToolUse, &fakeHook{pre: func(context.Context, hook.Request) (hook.PreToolUseResult, error) {
			return hook.PreToolUseResult{Action: 42}, nil
		}}},
		{"rewrite with an array", hook.EventPreToolUse, &fakeHook{pre: func(context.Context, hook.Request) (hook.PreToolUseResult, error) {
			return hook.Rewrite(json.RawMessage(`[1,2]`), ""), nil
		}}},
		{"rewrite with broken JSON", hook.EventPreToolUse, &fakeHook{pre: func(context.Context, hook.Request) (hook.PreToolUseResult, error) {
			return hook.Rewrite(json.RawMessage(`{"a":`), ""), nil
		}}},
		{"unknown decision", hook.EventPermissionRequest, &fakeHook{perm: func(context.Context, hook.Request) (hook.PermissionResult, error) {
			return hook.PermissionResult{Decision: 99}, nil
		}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := plugintest.Hook(t, tt.hook)
			if err := eventCalls[tt.event](t.Context(), h); !errors.Is(err, sdk.ErrBadResponse) {
				t.Errorf("got %v, want sdk.ErrBadResponse", err)
			}
		})
	}
}

// rawServer serves impl on a plain gRPC server, so that a test can stop
// the server (a dying plugin) and control the exit context.
func rawServer(t *testing.T, impl hook.Hook) (*grpc.ClientConn, *grpc.Server) {
	t.Helper()
	conn, server := plugin.TestGRPCConn(t, func(s *grpc.Server) {
		if err := (&hook.GRPCPlugin{Impl: impl}).GRPCServer(nil, s); err != nil {
			t.Fatal(err)
		}
	})
	t.Cleanup(func() {
		_ = conn.Close()
		server.Stop()
	})
	return conn, server
}

func TestPluginExitMidCallIsErrPluginExited(t *testing.T) {
	for _, event := range hook.AllEvents {
		t.Run(string(event), func(t *testing.T) {
			inCall := make(chan struct{})
			release := make(chan struct{})
			conn, server := rawServer(t, every(func(ctx context.Context) error {
				close(inCall)
				select {
				case <-release:
				case <-ctx.Done():
				}
				return nil
			}))
			defer close(release)
			exited, markExited := context.WithCancel(context.Background())
			defer markExited()
			h := hook.NewClient(conn, exited)
			go func() {
				<-inCall
				// The process dies: its connections break first, and
				// go-plugin notices the exit a moment later.
				server.Stop()
				markExited()
			}()
			if err := eventCalls[event](t.Context(), h); !errors.Is(err, sdk.ErrPluginExited) {
				t.Errorf("got %v, want sdk.ErrPluginExited", err)
			}
			select {
			case <-h.Exited():
			default:
				t.Error("Exited() is not closed after the plugin exited")
			}
		})
	}
}

func TestCallAfterExitIsErrPluginExited(t *testing.T) {
	conn, server := rawServer(t, hook.Base{})
	server.Stop()
	exited, markExited := context.WithCancel(context.Background())
	markExited()
	h := hook.NewClient(conn, exited)
	for _, event := range hook.AllEvents {
		if err := eventCalls[event](t.Context(), h); !errors.Is(err, sdk.ErrPluginExited) {
			t.Errorf("%s: got %v, want sdk.ErrPluginExited", event, err)
		}
	}
}

// configurable is a hook with a config schema.
type configurable struct {
	hook.Base
	mu      sync.Mutex
	pattern string
}

func (c *configurable) Events() []hook.Event { return []hook.Event{hook.EventPermissionRequest} }

func (c *configurable) Identity() sdk.Identity { return sdk.Identity{Name: "policy", Version: "1.2.3"} }

func (c *configurable) ConfigSchema() sdk.ConfigSchema {
	return sdk.ConfigSchema{
		Attributes: []sdk.Attribute{
			{Name: "mode", Type: sdk.TypeString, Description: "how strict", Default: json.RawMessage(`"strict"`)},
		},
		Blocks: []sdk.NestedBlock{{
			TypeName: "rule",
			Nesting:  sdk.NestingList,
			Block: sdk.ConfigSchema{Attributes: []sdk.Attribute{
				{Name: "pattern", Type: sdk.TypeString, Required: true},
				{Name: "tools", Type: sdk.ListOf(sdk.TypeString)},
			}},
		}},
	}
}

func (c *configurable) Configure(_ context.Context, raw json.RawMessage) []sdk.Diagnostic {
	var cfg struct {
		Rule []struct{ Pattern string } `json:"rule"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return []sdk.Diagnostic{{Summary: "invalid configuration", Detail: err.Error()}}
	}
	var diags []sdk.Diagnostic
	for i, r := range cfg.Rule {
		if strings.Contains(r.Pattern, "(") && !strings.Contains(r.Pattern, ")") {
			diags = append(diags, sdk.Diagnostic{
				Severity:      sdk.SeverityError,
				Summary:       "invalid pattern",
				Detail:        "missing closing ): close the group",
				AttributePath: []string{"rule", strconv.Itoa(i), "pattern"},
			})
		}
	}
	if len(cfg.Rule) == 0 {
		diags = append(diags, sdk.Diagnostic{Severity: sdk.SeverityWarning, Summary: "no rules", Detail: "the hook allows nothing"})
	}
	if !sdk.HasErrors(diags) && len(cfg.Rule) > 0 {
		c.mu.Lock()
		c.pattern = cfg.Rule[0].Pattern
		c.mu.Unlock()
	}
	return diags
}

func (c *configurable) PermissionRequest(context.Context, hook.Request) (hook.PermissionResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pattern == "" {
		return hook.PermissionResult{}, sdk.ErrNotConfigured
	}
	return hook.Allow("matched " + c.pattern), nil
}

func TestInfoAndConfigureRoundTrip(t *testing.T) {
	h := plugintest.Hook(t, &configurable{})
	ctx := t.Context()

	if _, err := h.PermissionRequest(ctx, fullRequest); !errors.Is(err, sdk.ErrNotConfigured) {
		t.Errorf("before Configure: got %v, want sdk.ErrNotConfigured", err)
	}

	info, err := h.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantInfo := sdk.Info{
		Name:         "policy",
		Kind:         sdk.KindHook,
		Version:      "1.2.3",
		APIVersions:  []string{sdk.APIVersion},
		Capabilities: []string{"permission_request", sdk.CapabilityConfigure},
		ConfigSchema: ptr((&configurable{}).ConfigSchema()),
	}
	if diff := cmp.Diff(wantInfo, info); diff != "" {
		t.Errorf("Info (-want +got):\n%s", diff)
	}

	diags, err := h.Configure(ctx, json.RawMessage(`{"mode":"strict","rule":[{"pattern":"ok"},{"pattern":"(bad"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	wantDiags := []sdk.Diagnostic{{
		Severity:      sdk.SeverityError,
		Summary:       "invalid pattern",
		Detail:        "missing closing ): close the group",
		AttributePath: []string{"rule", "1", "pattern"},
	}}
	if diff := cmp.Diff(wantDiags, diags); diff != "" {
		t.Errorf("Configure diagnostics (-want +got):\n%s", diff)
	}

	diags, err = h.Configure(ctx, json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]sdk.Diagnostic{{Severity: sdk.SeverityWarning, Summary: "no rules", Detail: "the hook allows nothing"}}, diags); diff != "" {
		t.Errorf("warning diagnostics (-want +got):\n%s", diff)
	}

	if diags, err := h.Configure(ctx, json.RawMessage(`{"rule":[{"pattern":"^read"}]}`)); err != nil || len(diags) != 0 {
		t.Fatalf("Configure = %v, %v; want no diagnostics", diags, err)
	}
	res, err := h.PermissionRequest(ctx, fullRequest)
	if err != nil || !cmp.Equal(res, hook.Allow("matched ^read")) {
		t.Errorf("after Configure: got %+v, %v", res, err)
	}
}

func TestUnlistedEventsAreNotCalled(t *testing.T) {
	h := plugintest.Hook(t, &configurable{})
	if !h.Handles(hook.EventPreToolUse) {
		t.Error("before Info, the client must assume every event is handled")
	}
	if _, err := h.Info(t.Context()); err != nil {
		t.Fatal(err)
	}
	// configurable lists only permission_request, and its Base would
	// answer the others; the client must not even ask.
	if h.Handles(hook.EventPreToolUse) || h.Handles(hook.EventPostToolUse) || !h.Handles(hook.EventPermissionRequest) {
		t.Errorf("Handles after Info: pre=%v perm=%v post=%v, want false true false",
			h.Handles(hook.EventPreToolUse), h.Handles(hook.EventPermissionRequest), h.Handles(hook.EventPostToolUse))
	}
	pre, err := h.PreToolUse(t.Context(), fullRequest)
	if err != nil || !cmp.Equal(pre, hook.Continue()) {
		t.Errorf("PreToolUse of an unlisted event = %+v, %v; want continue", pre, err)
	}
}

func TestConfigureWithoutSchema(t *testing.T) {
	h := plugintest.Hook(t, hook.Base{})
	info, err := h.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.ConfigSchema != nil || info.Has(sdk.CapabilityConfigure) {
		t.Errorf("a hook without Configurer reported a schema: %+v", info)
	}
	if diags, err := h.Configure(t.Context(), json.RawMessage(`{}`)); err != nil || len(diags) != 0 {
		t.Errorf("empty config: %v, %v; want no diagnostics", diags, err)
	}
	diags, err := h.Configure(t.Context(), json.RawMessage(`{"x":1}`))
	if err != nil || !sdk.HasErrors(diags) {
		t.Errorf("config for a plugin without schema: %v, %v; want an error diagnostic", diags, err)
	}
}
