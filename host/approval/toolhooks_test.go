package approval

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
)

type fakePre struct {
	NameV    string
	OnErrorV config.OnError
	MatchF   func(Request) bool
	PreF     func(context.Context, Request) (PreVerdict, error)
}

func (h *fakePre) Name() string            { return h.NameV }
func (h *fakePre) OnError() config.OnError { return h.OnErrorV }
func (h *fakePre) PreToolUse(ctx context.Context, r Request) (PreVerdict, error) {
	return h.PreF(ctx, r)
}
func (h *fakePre) Matches(r Request) bool { return h.MatchF == nil || h.MatchF(r) }

type fakePost struct {
	NameV string
	PostF func(context.Context, Request, PostResult) (string, error)
}

func (h *fakePost) Name() string { return h.NameV }
func (h *fakePost) PostToolUse(ctx context.Context, r Request, res PostResult) (string, error) {
	return h.PostF(ctx, r, res)
}

var pathSchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"path": map[string]any{"type": "string"}},
	"required":   []any{"path"},
}

func TestPreToolUseChain(t *testing.T) {
	rewrite := func(args string) func(context.Context, Request) (PreVerdict, error) {
		return func(context.Context, Request) (PreVerdict, error) {
			return PreVerdict{Action: PreRewrite, Arguments: json.RawMessage(args)}, nil
		}
	}
	cont := func(context.Context, Request) (PreVerdict, error) { return PreVerdict{}, nil }
	fail := func(context.Context, Request) (PreVerdict, error) { return PreVerdict{}, errors.New("boom") }
	for _, tt := range []struct {
		name     string
		hooks    []PreToolUseHook
		wantArgs string
		denied   string // substring of the denial text, "" = runs
	}{
		{"no hooks", nil, `{"path":"a"}`, ""},
		{"continue", []PreToolUseHook{&fakePre{NameV: "c", PreF: cont}}, `{"path":"a"}`, ""},
		{"block with reason", []PreToolUseHook{&fakePre{NameV: "b", PreF: func(context.Context, Request) (PreVerdict, error) {
			return PreVerdict{Action: PreBlock, Reason: "no writes on Fridays"}, nil
		}}}, "", "no writes on Fridays"},
		{"rewrite, then a later hook sees it", []PreToolUseHook{
			&fakePre{NameV: "r", PreF: rewrite(`{"path":"b"}`)},
			&fakePre{NameV: "check", PreF: func(_ context.Context, r Request) (PreVerdict, error) {
				if string(r.Arguments) != `{"path":"b"}` {
					return PreVerdict{Action: PreBlock, Reason: "saw " + string(r.Arguments)}, nil
				}
				return PreVerdict{}, nil
			}},
		}, `{"path":"b"}`, ""},
		{"rewrite violating the schema denies", []PreToolUseHook{&fakePre{NameV: "r", PreF: rewrite(`{"path":7}`)}},
			"", "do not match the tool's input schema"},
		{"rewrite to a non-object denies", []PreToolUseHook{&fakePre{NameV: "r", PreF: rewrite(`[1]`)}}, "", "JSON object"},
		{"failure denies by default", []PreToolUseHook{&fakePre{NameV: "f", PreF: fail}}, "", `PreToolUse hook "f" failed: boom`},
		{"failure skipped with on_error skip", []PreToolUseHook{&fakePre{NameV: "f", OnErrorV: config.OnErrorSkip, PreF: fail}},
			`{"path":"a"}`, ""},
		{"unknown action is a failure", []PreToolUseHook{&fakePre{NameV: "g", PreF: func(context.Context, Request) (PreVerdict, error) {
			return PreVerdict{Action: 42}, nil
		}}}, "", "unknown PreToolUse action"},
		{"panic is a failure", []PreToolUseHook{&fakePre{NameV: "p", PreF: func(context.Context, Request) (PreVerdict, error) {
			panic("oops")
		}}}, "", "panicked"},
		{"a hook that does not match is not asked", []PreToolUseHook{&fakePre{NameV: "other",
			MatchF: func(r Request) bool { return r.Server == "elsewhere" }, PreF: fail}}, `{"path":"a"}`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := &events.Recorder{}
			p := New(Options{PreToolUse: tt.hooks, Events: rec})
			r, d := p.PreToolUse(t.Context(), Request{CallID: "c1", Server: "files", Tool: "write", Arguments: json.RawMessage(`{"path":"a"}`)}, pathSchema)
			switch {
			case tt.denied == "" && d != nil:
				t.Fatalf("denied: %+v", d)
			case tt.denied != "" && (d == nil || !strings.Contains(d.Text, tt.denied) || d.Approved):
				t.Fatalf("decision = %+v, want a denial containing %q", d, tt.denied)
			case tt.denied == "" && string(r.Arguments) != tt.wantArgs:
				t.Fatalf("arguments = %s, want %s", r.Arguments, tt.wantArgs)
			}
			if tt.name == "rewrite, then a later hook sees it" {
				rewrites := 0
				for _, e := range events.Of[events.ApprovalDecision](rec) {
					if string(e.Before) == `{"path":"a"}` && string(e.After) == `{"path":"b"}` {
						rewrites++
					}
				}
				if rewrites != 1 {
					t.Errorf("the audit trail has %d before/after records of the rewrite, want 1", rewrites)
				}
			}
		})
	}
}

// TestRewriteWithAnUnresolvableSchemaIsRefused: a rewrite is accepted only
// when it validates; without a schema that resolves, it cannot, and the
// hook counts as failed (denied by default, skipped with the original
// arguments under on_error = "skip").
func TestRewriteWithAnUnresolvableSchemaIsRefused(t *testing.T) {
	rewrite := func(context.Context, Request) (PreVerdict, error) {
		return PreVerdict{Action: PreRewrite, Arguments: json.RawMessage(`{"path":"b"}`)}, nil
	}
	for _, tt := range []struct {
		name   string
		schema any
	}{
		{"no schema", nil},
		{"unresolvable $ref", map[string]any{"$ref": "https://schemas.example.invalid/write.json"}},
		{"dangling local $ref", map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"$ref": "#/$defs/missing"}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := Request{CallID: "c1", Server: "files", Tool: "write", Arguments: json.RawMessage(`{"path":"a"}`)}
			p := New(Options{PreToolUse: []PreToolUseHook{&fakePre{NameV: "r", PreF: rewrite}}})
			_, d := p.PreToolUse(t.Context(), req, tt.schema)
			if d == nil || d.Approved || !strings.Contains(d.Text, "cannot be resolved, so the rewritten arguments cannot be checked") {
				t.Fatalf("decision = %+v, want the rewrite refused and the call denied", d)
			}
			p = New(Options{PreToolUse: []PreToolUseHook{&fakePre{NameV: "r", OnErrorV: config.OnErrorSkip, PreF: rewrite}}})
			r, d := p.PreToolUse(t.Context(), req, tt.schema)
			if d != nil || string(r.Arguments) != `{"path":"a"}` {
				t.Fatalf("on_error skip: %+v, arguments %s; want the call to run with its original arguments", d, r.Arguments)
			}
		})
	}
}

func TestPostToolUseNotes(t *testing.T) {
	p := New(Options{PostToolUse: []PostToolUseHook{
		&fakePost{NameV: "quiet", PostF: func(context.Context, Request, PostResult) (string, error) { return "", nil }},
		&fakePost{NameV: "broken", PostF: func(context.Context, Request, PostResult) (string, error) { return "", errors.New("x") }},
		&fakePost{NameV: "lint", PostF: func(_ context.Context, _ Request, res PostResult) (string, error) {
			if res.IsError {
				return "the call failed; check the path", nil
			}
			return "", nil
		}},
	}})
	notes := p.PostToolUse(t.Context(), Request{}, PostResult{Status: events.CallFailed, IsError: true})
	if len(notes) != 1 || notes[0] != `Note from hook "lint": the call failed; check the path` {
		t.Fatalf("notes = %q", notes)
	}
}
