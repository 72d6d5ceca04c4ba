package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
)

var (
	onRequest = config.Approval{Policy: config.PolicyOnRequest, Permissions: config.PermWorkspaceWrite, Reviewer: config.ReviewerUser}
	untrusted = config.Approval{Policy: config.PolicyUntrusted, Permissions: config.PermWorkspaceWrite, Reviewer: config.ReviewerUser}
	never     = config.Approval{Policy: config.PolicyNever, Permissions: config.PermWorkspaceWrite, Reviewer: config.ReviewerUser}
	neverFull = config.Approval{Policy: config.PolicyNever, Permissions: config.PermFullAccess, Reviewer: config.ReviewerUser}
	guardian  = config.Approval{Policy: config.PolicyOnRequest, Permissions: config.PermWorkspaceWrite, Reviewer: config.ReviewerGuardian}
)

// readOnly and closedWorld are annotations that need no approval in mode
// auto; destructive always needs it.
var (
	readOnly    = &mcp.ToolAnnotations{ReadOnlyHint: true}
	closedWorld = &mcp.ToolAnnotations{DestructiveHint: hint(false), OpenWorldHint: hint(false)}
	destructive = &mcp.ToolAnnotations{DestructiveHint: hint(true)}
)

func request(session, tool string) Request {
	return Request{
		CallID:      "call-1",
		SessionID:   session,
		Server:      "files",
		Tool:        tool,
		ModelName:   "mcp__files__" + tool,
		Arguments:   json.RawMessage(`{"path":"a.txt"}`),
		Annotations: destructive,
		Title:       "Write file",
		Description: "Writes a file.",
	}
}

func ev(step, by, verdict, rationale, risk string) events.ApprovalDecision {
	return events.ApprovalDecision{
		Call: events.Call{
			CallID:    "call-1",
			SessionID: "s1",
			Server:    "files",
			Tool:      "write_file",
			ModelName: "mcp__files__write_file",
		},
		Step: step, By: by, Verdict: verdict, Rationale: rationale, RiskLevel: risk,
	}
}

func servers(mode config.ApprovalMode) func(string) (config.Server, bool) {
	return func(name string) (config.Server, bool) {
		if name != "files" {
			return config.Server{}, false
		}
		s := config.Server{Name: "files"}
		if mode != "" {
			s.Tools = map[string]config.ToolConfig{"write_file": {ApprovalMode: mode}}
		}
		return s, true
	}
}

type hookSpec struct {
	name    string
	onError config.OnError
	answer  func(context.Context, Request) (HookVerdict, error)
}

func says(d HookDecision, msg string) func(context.Context, Request) (HookVerdict, error) {
	return func(context.Context, Request) (HookVerdict, error) {
		return HookVerdict{Decision: d, Message: msg}, nil
	}
}

func hookFails(err error) func(context.Context, Request) (HookVerdict, error) {
	return func(context.Context, Request) (HookVerdict, error) { return HookVerdict{}, err }
}

func assesses(a Assessment, err error) func(context.Context, Request) (Assessment, error) {
	return func(context.Context, Request) (Assessment, error) { return a, err }
}

func answers(c Choice, err error) func(context.Context, Prompt) (Choice, error) {
	return func(context.Context, Prompt) (Choice, error) { return c, err }
}

type decideCase struct {
	name       string
	approval   config.Approval
	mode       config.ApprovalMode // the tool's approval_mode; "" = unset (auto)
	ann        *mcp.ToolAnnotations
	hooks      []hookSpec
	review     func(context.Context, Request) (Assessment, error) // nil = no reviewer
	ask        func(context.Context, Prompt) (Choice, error)      // nil = no asker
	want       Decision
	wantTrace  []string
	wantEvents []events.ApprovalDecision
}

// build wires the case's fakes into a Procedure that records calls in tr
// and events in rec.
func (c decideCase) build(tr *trace, rec *events.Recorder) *Procedure {
	opts := Options{Approval: c.approval, Server: servers(c.mode), Events: rec}
	for _, h := range c.hooks {
		opts.Hooks = append(opts.Hooks, &fakeHook{NameV: h.name, OnErrorV: h.onError,
			PermissionRequestF: func(ctx context.Context, r Request) (HookVerdict, error) {
				tr.add("hook " + h.name)
				return h.answer(ctx, r)
			}})
	}
	if c.review != nil {
		opts.Reviewer = &fakeReviewer{NameV: "guardian-rules", ReviewF: func(ctx context.Context, r Request) (Assessment, error) {
			tr.add("reviewer")
			return c.review(ctx, r)
		}}
	}
	if c.ask != nil {
		opts.Asker = &fakeAsker{AskApprovalF: func(ctx context.Context, p Prompt) (Choice, error) {
			tr.add("user")
			return c.ask(ctx, p)
		}}
	}
	return New(opts)
}

const (
	textRiskDenied = "This action was rejected due to unacceptable risk.\nReason: writes outside the workspace\n" +
		"Do not try to work around this decision. Proceed only with a materially safer alternative, or ask the user for explicit approval."
	textTimeout = "The automatic permission approval review did not finish before its deadline. Do not assume the action is unsafe " +
		"based on the timeout alone. You may retry once, or ask the user for guidance or explicit approval."
	textNoApprover = `MCP tool call denied: approval was required, but nobody could be asked (no approver is configured for this host). ` +
		`To approve such calls, run toolgate in an interactive terminal, configure a permission hook or the Guardian reviewer ` +
		`(approval { reviewer = "guardian" }), or allow this tool without asking by adding tool "write_file" { approval_mode = "approve" } ` +
		`to the server "files" block.`
	textNotATerminal = `MCP tool call denied: approval was required, but nobody could be asked (nobody to ask: stdin is not a terminal). ` +
		`To approve such calls, run toolgate in an interactive terminal, configure a permission hook or the Guardian reviewer ` +
		`(approval { reviewer = "guardian" }), or allow this tool without asking by adding tool "write_file" { approval_mode = "approve" } ` +
		`to the server "files" block.`
)

func TestDecide(t *testing.T) {
	allow := answers(ChoiceAllow, nil)
	boom := errors.New("boom")
	cases := []decideCase{
		// Step 2: auto-approved.
		{
			name: "mode approve skips everything", approval: guardian, mode: config.ModeApprove,
			hooks: []hookSpec{{"deny-all", "", says(HookDeny, "no")}}, review: assesses(Assessment{Outcome: "deny"}, nil), ask: allow,
			want:       Decision{Approved: true, Step: "mode", By: "host"},
			wantEvents: []events.ApprovalDecision{ev("mode", "host", "approved", `approval_mode = "approve"`, "")},
		},
		{
			name: "policy never with full access", approval: neverFull, ask: allow,
			want:       Decision{Approved: true, Step: "mode", By: "host"},
			wantEvents: []events.ApprovalDecision{ev("mode", "host", "approved", "approval policy is never with full-access permissions", "")},
		},
		// Step 3: annotations.
		{
			name: "read-only tool in auto", approval: onRequest, ann: readOnly, ask: allow,
			want:       Decision{Approved: true, Step: "annotations", By: "host"},
			wantEvents: []events.ApprovalDecision{ev("annotations", "host", "approved", "mode auto does not require approval for this tool's annotations", "")},
		},
		{
			name: "closed-world non-destructive tool in auto", approval: never, ann: closedWorld,
			want:       Decision{Approved: true, Step: "annotations", By: "host"},
			wantEvents: []events.ApprovalDecision{ev("annotations", "host", "approved", "mode auto does not require approval for this tool's annotations", "")},
		},
		{
			name: "read-only tool in writes", approval: onRequest, mode: config.ModeWrites, ann: readOnly, ask: allow,
			want:       Decision{Approved: true, Step: "annotations", By: "host"},
			wantEvents: []events.ApprovalDecision{ev("annotations", "host", "approved", "mode writes does not require approval for this tool's annotations", "")},
		},
		{
			name: "closed-world tool in writes asks", approval: onRequest, mode: config.ModeWrites, ann: closedWorld, ask: allow,
			want: Decision{Approved: true, Step: "user", By: "user"}, wantTrace: []string{"user"},
			wantEvents: []events.ApprovalDecision{ev("user", "user", "approved", "Allow", "")},
		},
		{
			name: "read-only tool in prompt asks", approval: onRequest, mode: config.ModePrompt, ann: readOnly, ask: allow,
			want: Decision{Approved: true, Step: "user", By: "user"}, wantTrace: []string{"user"},
			wantEvents: []events.ApprovalDecision{ev("user", "user", "approved", "Allow", "")},
		},
		// Step 5: hooks.
		{
			name: "hook deny wins at once", approval: onRequest,
			hooks: []hookSpec{{"a", "", says(HookNone, "")}, {"b", "", says(HookDeny, "writes are off today")}, {"c", "", says(HookAllow, "")}},
			ask:   allow,
			want:  Decision{Step: "hook", By: "b", Text: "writes are off today"}, wantTrace: []string{"hook a", "hook b"},
			wantEvents: []events.ApprovalDecision{
				ev("hook", "a", "abstain", "", ""),
				ev("hook", "b", "denied", "writes are off today", ""),
			},
		},
		{
			name: "hook deny without message gets a default text", approval: onRequest,
			hooks: []hookSpec{{"policy", "", says(HookDeny, "  ")}}, ask: allow,
			want: Decision{Step: "hook", By: "policy", Text: `denied by permission hook "policy"`}, wantTrace: []string{"hook policy"},
			wantEvents: []events.ApprovalDecision{ev("hook", "policy", "denied", `denied by permission hook "policy"`, "")},
		},
		{
			name: "hook allow approves after the rest abstain", approval: guardian,
			hooks:  []hookSpec{{"a", "", says(HookAllow, "")}, {"b", "", says(HookNone, "")}},
			review: assesses(Assessment{Outcome: "deny"}, nil), ask: allow,
			want: Decision{Approved: true, Step: "hook", By: "a"}, wantTrace: []string{"hook a", "hook b"},
			wantEvents: []events.ApprovalDecision{
				ev("hook", "b", "abstain", "", ""),
				ev("hook", "a", "approved", "allowed by permission hook", ""),
			},
		},
		{
			name: "a later deny beats an earlier allow", approval: onRequest,
			hooks: []hookSpec{{"a", "", says(HookAllow, "")}, {"b", "", says(HookDeny, "no")}}, ask: allow,
			want: Decision{Step: "hook", By: "b", Text: "no"}, wantTrace: []string{"hook a", "hook b"},
			wantEvents: []events.ApprovalDecision{ev("hook", "b", "denied", "no", "")},
		},
		{
			name: "hooks without a decision fall through to the user", approval: onRequest,
			hooks: []hookSpec{{"a", "", says(HookNone, "")}, {"b", config.OnErrorSkip, says(HookNone, "")}}, ask: allow,
			want: Decision{Approved: true, Step: "user", By: "user"}, wantTrace: []string{"hook a", "hook b", "user"},
			wantEvents: []events.ApprovalDecision{
				ev("hook", "a", "abstain", "", ""),
				ev("hook", "b", "abstain", "", ""),
				ev("user", "user", "approved", "Allow", ""),
			},
		},
		{
			name: "failing hook denies by default", approval: onRequest,
			hooks: []hookSpec{{"a", "", hookFails(boom)}, {"b", "", says(HookAllow, "")}}, ask: allow,
			want:      Decision{Step: "hook", By: "a", Text: `permission hook "a" failed: boom; the call was denied (on_error = "deny")`},
			wantTrace: []string{"hook a"},
			wantEvents: []events.ApprovalDecision{
				ev("hook", "a", "denied", `permission hook "a" failed: boom; the call was denied (on_error = "deny")`, ""),
			},
		},
		{
			name: "failing hook with on_error deny", approval: onRequest,
			hooks: []hookSpec{{"a", config.OnErrorDeny, hookFails(boom)}}, ask: allow,
			want:      Decision{Step: "hook", By: "a", Text: `permission hook "a" failed: boom; the call was denied (on_error = "deny")`},
			wantTrace: []string{"hook a"},
			wantEvents: []events.ApprovalDecision{
				ev("hook", "a", "denied", `permission hook "a" failed: boom; the call was denied (on_error = "deny")`, ""),
			},
		},
		{
			name: "failing hook with on_error skip continues", approval: onRequest,
			hooks: []hookSpec{{"a", config.OnErrorSkip, hookFails(boom)}}, ask: allow,
			want: Decision{Approved: true, Step: "user", By: "user"}, wantTrace: []string{"hook a", "user"},
			wantEvents: []events.ApprovalDecision{
				ev("hook", "a", "abstain", `permission hook "a" failed: boom; skipped (on_error = "skip")`, ""),
				ev("user", "user", "approved", "Allow", ""),
			},
		},
		{
			name: "panicking hook is a failure", approval: onRequest,
			hooks: []hookSpec{{"a", "", func(context.Context, Request) (HookVerdict, error) { panic("kaboom") }}}, ask: allow,
			want:      Decision{Step: "hook", By: "a", Text: `permission hook "a" failed: panicked: kaboom; the call was denied (on_error = "deny")`},
			wantTrace: []string{"hook a"},
			wantEvents: []events.ApprovalDecision{
				ev("hook", "a", "denied", `permission hook "a" failed: panicked: kaboom; the call was denied (on_error = "deny")`, ""),
			},
		},
		{
			name: "panicking hook with on_error skip continues", approval: onRequest,
			hooks: []hookSpec{{"a", config.OnErrorSkip, func(context.Context, Request) (HookVerdict, error) { panic("kaboom") }}}, ask: allow,
			want: Decision{Approved: true, Step: "user", By: "user"}, wantTrace: []string{"hook a", "user"},
			wantEvents: []events.ApprovalDecision{
				ev("hook", "a", "abstain", `permission hook "a" failed: panicked: kaboom; skipped (on_error = "skip")`, ""),
				ev("user", "user", "approved", "Allow", ""),
			},
		},
		{
			name: "hook answering nonsense is a failure", approval: onRequest,
			hooks: []hookSpec{{"a", "", says(HookDecision(7), "")}}, ask: allow,
			want:      Decision{Step: "hook", By: "a", Text: `permission hook "a" failed: answered with an unknown decision (HookDecision(7)); the call was denied (on_error = "deny")`},
			wantTrace: []string{"hook a"},
			wantEvents: []events.ApprovalDecision{
				ev("hook", "a", "denied", `permission hook "a" failed: answered with an unknown decision (HookDecision(7)); the call was denied (on_error = "deny")`, ""),
			},
		},
		// Step 6: reviewer.
		{
			name: "guardian allows", approval: guardian,
			review: assesses(Assessment{Outcome: "allow", RiskLevel: "low", Rationale: "only touches a.txt"}, nil), ask: allow,
			want: Decision{Approved: true, Step: "guardian", By: "guardian-rules"}, wantTrace: []string{"reviewer"},
			wantEvents: []events.ApprovalDecision{ev("guardian", "guardian-rules", "approved", "only touches a.txt", "low")},
		},
		{
			name: "guardian denies", approval: guardian,
			review: assesses(Assessment{Outcome: "deny", RiskLevel: "high", Rationale: "writes outside the workspace"}, nil), ask: allow,
			want: Decision{Step: "guardian", By: "guardian-rules", Text: textRiskDenied}, wantTrace: []string{"reviewer"},
			wantEvents: []events.ApprovalDecision{ev("guardian", "guardian-rules", "denied", textRiskDenied, "high")},
		},
		{
			name: "guardian timeout", approval: guardian,
			review: assesses(Assessment{}, fmt.Errorf("review call: %w", ErrReviewTimeout)), ask: allow,
			want: Decision{Step: "guardian", By: "guardian-rules", Text: textTimeout}, wantTrace: []string{"reviewer"},
			wantEvents: []events.ApprovalDecision{ev("guardian", "guardian-rules", "denied", textTimeout, "")},
		},
		{
			name: "guardian error fails closed", approval: guardian,
			review: assesses(Assessment{}, errors.New("plugin exited")), ask: allow,
			want: Decision{Step: "guardian", By: "guardian-rules", Text: "Automatic approval review failed: plugin exited"}, wantTrace: []string{"reviewer"},
			wantEvents: []events.ApprovalDecision{ev("guardian", "guardian-rules", "denied", "Automatic approval review failed: plugin exited", "")},
		},
		{
			name: "guardian malformed outcome fails closed", approval: guardian,
			review: assesses(Assessment{Outcome: "ALLOW", RiskLevel: "low"}, nil), ask: allow,
			want: Decision{Step: "guardian", By: "guardian-rules",
				Text: `Automatic approval review failed: the reviewer answered with outcome "ALLOW"; expected "allow" or "deny"`},
			wantTrace: []string{"reviewer"},
			wantEvents: []events.ApprovalDecision{ev("guardian", "guardian-rules", "denied",
				`Automatic approval review failed: the reviewer answered with outcome "ALLOW"; expected "allow" or "deny"`, "low")},
		},
		{
			name: "guardian configured without a plugin", approval: guardian, ask: allow,
			want:       Decision{Step: "guardian", By: "guardian", Text: noGuardianText},
			wantEvents: []events.ApprovalDecision{ev("guardian", "guardian", "denied", noGuardianText, "")},
		},
		{
			name: "hooks run before the guardian", approval: guardian,
			hooks:  []hookSpec{{"a", "", says(HookDeny, "no")}},
			review: assesses(Assessment{Outcome: "allow"}, nil), ask: allow,
			want: Decision{Step: "hook", By: "a", Text: "no"}, wantTrace: []string{"hook a"},
			wantEvents: []events.ApprovalDecision{ev("hook", "a", "denied", "no", "")},
		},
		{
			name:     "untrusted never uses the guardian",
			approval: config.Approval{Policy: config.PolicyUntrusted, Permissions: config.PermWorkspaceWrite, Reviewer: config.ReviewerGuardian},
			review:   assesses(Assessment{Outcome: "deny"}, nil), ask: allow,
			want: Decision{Approved: true, Step: "user", By: "user"}, wantTrace: []string{"user"},
			wantEvents: []events.ApprovalDecision{ev("user", "user", "approved", "Allow", "")},
		},
		{
			name:     "policy never with guardian denies without review",
			approval: config.Approval{Policy: config.PolicyNever, Permissions: config.PermWorkspaceWrite, Reviewer: config.ReviewerGuardian},
			review:   assesses(Assessment{Outcome: "allow"}, nil), ask: allow,
			want:       Decision{Step: "user", By: "host", Text: "MCP tool call requires approval, but approval policy is never"},
			wantEvents: []events.ApprovalDecision{ev("user", "host", "denied", "MCP tool call requires approval, but approval policy is never", "")},
		},
		// Step 7: user.
		{
			name: "policy never denies", approval: never, ask: allow,
			want:       Decision{Step: "user", By: "host", Text: "MCP tool call requires approval, but approval policy is never"},
			wantEvents: []events.ApprovalDecision{ev("user", "host", "denied", "MCP tool call requires approval, but approval policy is never", "")},
		},
		{
			name: "untrusted asks the user", approval: untrusted, ask: allow,
			want: Decision{Approved: true, Step: "user", By: "user"}, wantTrace: []string{"user"},
			wantEvents: []events.ApprovalDecision{ev("user", "user", "approved", "Allow", "")},
		},
		{
			name: "no asker", approval: onRequest,
			want:       Decision{Step: "user", By: "host", Text: textNoApprover},
			wantEvents: []events.ApprovalDecision{ev("user", "host", "denied", textNoApprover, "")},
		},
		{
			name: "asker has nobody to ask", approval: onRequest,
			ask:  answers(ChoiceAllow, fmt.Errorf("%w: stdin is not a terminal", ErrNobodyToAsk)),
			want: Decision{Step: "user", By: "host", Text: textNotATerminal}, wantTrace: []string{"user"},
			wantEvents: []events.ApprovalDecision{ev("user", "host", "denied", textNotATerminal, "")},
		},
		{
			name: "user declines", approval: onRequest, ask: answers(ChoiceDecline, nil),
			want: Decision{Step: "user", By: "user", Text: "user rejected MCP tool call"}, wantTrace: []string{"user"},
			wantEvents: []events.ApprovalDecision{ev("user", "user", "denied", "user rejected MCP tool call", "")},
		},
		{
			name: "user cancels", approval: onRequest, ask: answers(ChoiceCancel, nil),
			want: Decision{Step: "user", By: "user", Text: "user cancelled MCP tool call"}, wantTrace: []string{"user"},
			wantEvents: []events.ApprovalDecision{ev("user", "user", "denied", "user cancelled MCP tool call", "")},
		},
		{
			name: "asker error fails closed", approval: onRequest, ask: answers(ChoiceAllow, errors.New("write prompt: broken pipe")),
			want:      Decision{Step: "user", By: "host", Text: "MCP tool call denied: the approval prompt failed (write prompt: broken pipe)"},
			wantTrace: []string{"user"},
			wantEvents: []events.ApprovalDecision{
				ev("user", "host", "denied", "MCP tool call denied: the approval prompt failed (write prompt: broken pipe)", ""),
			},
		},
		{
			name: "unknown answer fails closed", approval: onRequest, ask: answers(Choice(9), nil),
			want:      Decision{Step: "user", By: "host", Text: "MCP tool call denied: the approval prompt returned an unknown answer (Choice(9))"},
			wantTrace: []string{"user"},
			wantEvents: []events.ApprovalDecision{
				ev("user", "host", "denied", "MCP tool call denied: the approval prompt returned an unknown answer (Choice(9))", ""),
			},
		},
		{
			name: "user allows for the session", approval: onRequest, ask: answers(ChoiceAllowSession, nil),
			want: Decision{Approved: true, Step: "user", By: "user"}, wantTrace: []string{"user"},
			wantEvents: []events.ApprovalDecision{ev("user", "user", "approved", "Allow for this session", "")},
		},
		{
			name: "prompt mode downgrades a remembering answer", approval: onRequest, mode: config.ModePrompt,
			ask:  answers(ChoiceAllowAlways, nil),
			want: Decision{Approved: true, Step: "user", By: "user"}, wantTrace: []string{"user"},
			wantEvents: []events.ApprovalDecision{ev("user", "user", "approved", "Allow", "")},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var tr trace
			rec := &events.Recorder{}
			r := request("s1", "write_file")
			if c.ann != nil {
				r.Annotations = c.ann
			}
			got := c.build(&tr, rec).Decide(t.Context(), r)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.wantTrace, tr.list()); diff != "" {
				t.Errorf("called (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.wantEvents, events.Of[events.ApprovalDecision](rec),
				cmpopts.IgnoreFields(events.ApprovalDecision{}, "At")); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecidePrompt pins what the user is shown: the question, and that
// remembering choices are offered only in mode auto.
func TestDecidePrompt(t *testing.T) {
	for _, tt := range []struct {
		mode config.ApprovalMode
		want []Choice
	}{
		{"", []Choice{ChoiceAllow, ChoiceAllowSession, ChoiceAllowAlways, ChoiceDecline, ChoiceCancel}},
		{config.ModePrompt, []Choice{ChoiceAllow, ChoiceDecline, ChoiceCancel}},
		{config.ModeWrites, []Choice{ChoiceAllow, ChoiceDecline, ChoiceCancel}},
	} {
		t.Run(string(tt.mode), func(t *testing.T) {
			var got Prompt
			p := New(Options{Approval: onRequest, Server: servers(tt.mode), Asker: &fakeAsker{
				AskApprovalF: func(_ context.Context, p Prompt) (Choice, error) { got = p; return ChoiceDecline, nil },
			}})
			r := request("s1", "write_file")
			p.Decide(t.Context(), r)

			wantMode := tt.mode
			if wantMode == "" {
				wantMode = config.ModeAuto
			}
			r.Mode, r.Policy = wantMode, config.PolicyOnRequest
			want := Prompt{
				Request:  r,
				Mode:     wantMode,
				Question: `Allow the files MCP server to run tool "write_file"?`,
				Choices:  tt.want,
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("prompt (-want +got):\n%s", diff)
			}
		})
	}
}

// askCounter is an Asker that answers from a queue and counts questions.
type askCounter struct {
	mu      sync.Mutex
	answers []Choice
	asked   int
}

func (a *askCounter) asker() *fakeAsker {
	return &fakeAsker{AskApprovalF: func(context.Context, Prompt) (Choice, error) {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.asked++
		if len(a.answers) == 0 {
			return ChoiceDecline, nil
		}
		c := a.answers[0]
		a.answers = a.answers[1:]
		return c, nil
	}}
}

func (a *askCounter) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.asked
}

func TestSessionMemory(t *testing.T) {
	var hookCalls atomic.Int32
	hook := &fakeHook{NameV: "audit", PermissionRequestF: func(context.Context, Request) (HookVerdict, error) {
		hookCalls.Add(1)
		return HookVerdict{}, nil
	}}
	ask := &askCounter{answers: []Choice{ChoiceAllowSession}}
	rec := &events.Recorder{}
	p := New(Options{Approval: onRequest, Server: servers(""), Hooks: []Hook{hook}, Asker: ask.asker(), Events: rec})
	ctx := t.Context()

	if d := p.Decide(ctx, request("s1", "write_file")); !d.Approved || d.Step != StepUser {
		t.Fatalf("first call = %+v, want approved by the user", d)
	}
	d := p.Decide(ctx, request("s1", "write_file"))
	if want := (Decision{Approved: true, Step: "session", By: "host"}); d != want {
		t.Errorf("second call in the session = %+v, want %+v", d, want)
	}
	if n := hookCalls.Load(); n != 1 {
		t.Errorf("hooks ran %d times, want 1: a remembered approval skips them", n)
	}
	last := events.Of[events.ApprovalDecision](rec)
	if got := last[len(last)-1]; got.Step != "session" || got.Rationale != "allowed earlier in this session" {
		t.Errorf("last event = %+v, want a session approval", got)
	}
	if n := ask.count(); n != 1 {
		t.Errorf("asked %d times, want 1", n)
	}

	// Another session and another tool are asked again (and declined).
	if d := p.Decide(ctx, request("s2", "write_file")); d.Approved {
		t.Errorf("call in another session = %+v, want asked and declined", d)
	}
	if d := p.Decide(ctx, request("s1", "delete_file")); d.Approved {
		t.Errorf("other tool = %+v, want asked and declined", d)
	}
	if n := ask.count(); n != 3 {
		t.Errorf("asked %d times, want 3", n)
	}

	p.ForgetSession("s1")
	if d := p.Decide(ctx, request("s1", "write_file")); d.Approved {
		t.Errorf("after ForgetSession = %+v, want asked again", d)
	}
}

func TestSessionMemoryOnlyInAuto(t *testing.T) {
	for _, tt := range []struct {
		mode   config.ApprovalMode
		answer Choice
	}{
		{config.ModePrompt, ChoiceAllowSession},
		{config.ModePrompt, ChoiceAllowAlways},
		{config.ModeWrites, ChoiceAllowSession},
		{config.ModeWrites, ChoiceAllowAlways},
	} {
		t.Run(string(tt.mode)+"/"+tt.answer.String(), func(t *testing.T) {
			ask := &askCounter{answers: []Choice{tt.answer, ChoiceAllow}}
			var persisted atomic.Int32
			p := New(Options{Approval: onRequest, Server: servers(tt.mode), Asker: ask.asker(),
				Persist: func(string, string, string) error { persisted.Add(1); return nil }})
			for i := range 2 {
				if d := p.Decide(t.Context(), request("s1", "write_file")); !d.Approved || d.Step != StepUser {
					t.Fatalf("call %d = %+v, want approved by the user", i, d)
				}
			}
			if n := ask.count(); n != 2 {
				t.Errorf("asked %d times, want 2: mode %s asks every time", n, tt.mode)
			}
			if n := persisted.Load(); n != 0 {
				t.Errorf("Persist called %d times, want 0", n)
			}
		})
	}
}

func TestAllowAlwaysPersists(t *testing.T) {
	type persistCall struct{ Server, Tool string }
	var (
		mu    sync.Mutex
		calls []persistCall
	)
	ask := &askCounter{answers: []Choice{ChoiceAllowAlways}}
	rec := &events.Recorder{}
	p := New(Options{Approval: onRequest, Server: servers(""), Asker: ask.asker(), Events: rec,
		Persist: func(server, tool, _ string) error {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, persistCall{server, tool})
			return nil
		}})

	if d := p.Decide(t.Context(), request("s1", "write_file")); !d.Approved || d.Step != StepUser {
		t.Fatalf("first call = %+v, want approved by the user", d)
	}
	d := p.Decide(t.Context(), request("s-new", "write_file"))
	if want := (Decision{Approved: true, Step: StepUser, By: "host"}); d != want {
		t.Errorf("call in a new session = %+v, want %+v", d, want)
	}
	if diff := cmp.Diff([]persistCall{{"files", "write_file"}}, calls); diff != "" {
		t.Errorf("Persist calls (-want +got):\n%s", diff)
	}
	if n := ask.count(); n != 1 {
		t.Errorf("asked %d times, want 1", n)
	}
	evs := events.Of[events.ApprovalDecision](rec)
	if got := evs[0].Rationale; got != "Allow and don't ask me again" {
		t.Errorf("user event rationale = %q", got)
	}
}

// TestReloadRevokesDeletedAllowAlways pins revocation: once the config
// is reloaded, the file is the only record of "Allow and don't ask me
// again", so an approval the operator deleted asks again at once, in
// every session, including the one that granted it. Session approvals
// survive the reload.
func TestReloadRevokesDeletedAllowAlways(t *testing.T) {
	ask := &askCounter{answers: []Choice{ChoiceAllowSession, ChoiceAllowAlways}}
	opts := Options{Approval: onRequest, Server: servers(""), Asker: ask.asker(),
		Persist: func(string, string, string) error { return nil }}
	p := New(opts)
	if d := p.Decide(t.Context(), request("s-session", "write_file")); !d.Approved {
		t.Fatalf("Allow for this session = %+v", d)
	}
	if d := p.Decide(t.Context(), request("s1", "write_file")); !d.Approved || d.Step != StepUser {
		t.Fatalf("Allow always = %+v", d)
	}
	if d := p.Decide(t.Context(), request("s2", "write_file")); !d.Approved || d.By != "host" {
		t.Fatalf("before the reload = %+v, want remembered", d)
	}

	// The reloaded file does not say approve for write_file (servers("")).
	p = p.Reconfigured(opts)
	for _, session := range []string{"s1", "s2"} {
		if d := p.Decide(t.Context(), request(session, "write_file")); d.Approved {
			t.Errorf("session %s after the approval was deleted and reloaded = %+v, want asked again (and declined)", session, d)
		}
	}
	if n := ask.count(); n != 4 {
		t.Errorf("asked %d times, want 4 (twice before the reload, once per session after)", n)
	}
	if d := p.Decide(t.Context(), request("s-session", "write_file")); !d.Approved || d.Step != StepSession {
		t.Errorf("Allow for this session after a reload = %+v, want still remembered", d)
	}

	// A reload whose file keeps the approval approves through the mode.
	p = p.Reconfigured(Options{Approval: onRequest, Server: servers(config.ModeApprove)})
	if d := p.Decide(t.Context(), request("s3", "write_file")); !d.Approved || d.Step != StepMode {
		t.Errorf("reloaded with approve in the file = %+v, want approved by the mode", d)
	}
}

// TestAuditGateRefusesCalls: with an audit gate (audit { on_error =
// "deny" }), a call is refused while the audit log cannot be written —
// before anyone is asked, and again when the log broke while the user was
// deciding. A writable log changes nothing.
func TestAuditGateRefusesCalls(t *testing.T) {
	var broken atomic.Bool
	gate := func() error {
		if broken.Load() {
			return errors.New("audit log /var/log/tg.jsonl: write tool_call_begin event: no space left on device")
		}
		return nil
	}
	ask := &askCounter{answers: []Choice{ChoiceAllow, ChoiceAllow}}
	p := New(Options{Approval: onRequest, Server: servers(""), Asker: ask.asker(), AuditWritable: gate})

	if d := p.Decide(t.Context(), request("s1", "write_file")); !d.Approved {
		t.Fatalf("writable log: %+v, want approved", d)
	}
	broken.Store(true)
	d := p.Decide(t.Context(), request("s1", "write_file"))
	if d.Approved || d.Step != StepAudit || d.By != "host" ||
		!strings.Contains(d.Text, "audit log cannot be written (audit log /var/log/tg.jsonl: write tool_call_begin event: no space left on device)") {
		t.Fatalf("failing log: %+v, want refused by the host at the audit step", d)
	}
	if n := ask.count(); n != 1 {
		t.Errorf("asked %d times, want 1: nobody is asked about a call that cannot run", n)
	}
	// Auto-approved calls are refused too.
	p = New(Options{Approval: onRequest, Server: servers(config.ModeApprove), AuditWritable: gate})
	if d := p.Decide(t.Context(), request("s1", "write_file")); d.Approved || d.Step != StepAudit {
		t.Errorf("approve mode with a failing log: %+v, want refused", d)
	}

	// The log breaks while the user is deciding.
	broken.Store(false)
	p = New(Options{Approval: onRequest, Server: servers(""), AuditWritable: gate, Asker: &fakeAsker{
		AskApprovalF: func(context.Context, Prompt) (Choice, error) {
			broken.Store(true)
			return ChoiceAllow, nil
		}}})
	if d := p.Decide(t.Context(), request("s1", "write_file")); d.Approved || d.Step != StepAudit {
		t.Errorf("log broke during the prompt: %+v, want refused", d)
	}
}

// TestNoPersistentApproval: where the operator has not allowed it, "Allow
// and don't ask me again" is not offered, and a client that answers it
// anyway gets a one-time Allow: nothing is written or remembered.
func TestNoPersistentApproval(t *testing.T) {
	var offered [][]Choice
	var persisted atomic.Int32
	p := New(Options{Approval: onRequest, Server: servers(""), NoPersistentApproval: true,
		Persist: func(string, string, string) error { persisted.Add(1); return nil },
		Asker: &fakeAsker{AskApprovalF: func(_ context.Context, pr Prompt) (Choice, error) {
			offered = append(offered, pr.Choices)
			return ChoiceAllowAlways, nil
		}}})
	for range 2 {
		if d := p.Decide(t.Context(), request("s1", "write_file")); !d.Approved || d.Step != StepUser {
			t.Fatalf("decision = %+v, want approved once by the user", d)
		}
	}
	want := []Choice{ChoiceAllow, ChoiceAllowSession, ChoiceDecline, ChoiceCancel}
	if diff := cmp.Diff([][]Choice{want, want}, offered); diff != "" {
		t.Errorf("offered choices (-want +got):\n%s", diff)
	}
	if n := persisted.Load(); n != 0 {
		t.Errorf("Persist called %d times, want 0", n)
	}
}

// TestPersistentApprovalNeverOverridesThePolicy: "Allow and don't ask me
// again" (mode remembered in the file, or not yet reloaded) replaces
// asking the human, never a permission hook's or the Guardian's deny. The
// operator's own approval_mode = "approve" still skips them.
func TestPersistentApprovalNeverOverridesThePolicy(t *testing.T) {
	denyHook := &fakeHook{NameV: "policy", PermissionRequestF: func(context.Context, Request) (HookVerdict, error) {
		return HookVerdict{Decision: HookDeny, Message: "not on Fridays"}, nil
	}}
	denyGuardian := &fakeReviewer{NameV: "guardian", ReviewF: func(context.Context, Request) (Assessment, error) {
		return Assessment{Outcome: OutcomeDeny, Rationale: "too risky"}, nil
	}}
	ask := &askCounter{}
	for _, tt := range []struct {
		name string
		opts Options
		want Decision
	}{
		{"remembered, no policy: not asked", Options{Approval: onRequest, Server: servers(config.ModeRemembered)},
			Decision{Approved: true, Step: StepUser, By: "host"}},
		{"remembered, hook denies", Options{Approval: onRequest, Server: servers(config.ModeRemembered), Hooks: []Hook{denyHook}},
			Decision{Step: StepHook, By: "policy", Text: "not on Fridays"}},
		{"remembered, Guardian denies", Options{Approval: guardian, Server: servers(config.ModeRemembered), Reviewer: denyGuardian},
			Decision{Step: StepReviewer, By: "guardian", Text: reviewDeniedText("too risky")}},
		{"operator's approve skips the hooks", Options{Approval: onRequest, Server: servers(config.ModeApprove), Hooks: []Hook{denyHook}},
			Decision{Approved: true, Step: StepMode, By: "host"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Asker = ask.asker()
			if d := New(tt.opts).Decide(t.Context(), request("s1", "write_file")); d != tt.want {
				t.Errorf("decision = %+v, want %+v", d, tt.want)
			}
		})
	}
	if n := ask.count(); n != 0 {
		t.Errorf("asked %d times, want 0", n)
	}

	// Saved but not yet reloaded: the hook added by the next decision's
	// config still denies.
	var deny atomic.Bool
	hook := &fakeHook{NameV: "policy", PermissionRequestF: func(context.Context, Request) (HookVerdict, error) {
		if deny.Load() {
			return HookVerdict{Decision: HookDeny}, nil
		}
		return HookVerdict{}, nil
	}}
	always := &askCounter{answers: []Choice{ChoiceAllowAlways}}
	p := New(Options{Approval: onRequest, Server: servers(""), Hooks: []Hook{hook}, Asker: always.asker(),
		Persist: func(string, string, string) error { return nil }})
	if d := p.Decide(t.Context(), request("s1", "write_file")); !d.Approved {
		t.Fatalf("Allow always = %+v", d)
	}
	deny.Store(true)
	if d := p.Decide(t.Context(), request("s2", "write_file")); d.Approved || d.Step != StepHook {
		t.Errorf("after Allow always, a denying hook = %+v, want denied by the hook", d)
	}
}

func TestAllowAlwaysPersistFailure(t *testing.T) {
	for _, tt := range []struct {
		name    string
		persist func(string, string, string) error
		note    string
	}{
		{"write fails", func(string, string, string) error { return errors.New("remember tool approval: read-only file system") },
			"Allow and don't ask me again; not saved to the config file (remember tool approval: read-only file system), remembered for this session only"},
		{"no writer", nil,
			"Allow and don't ask me again; not saved to the config file (no config file to write to), remembered for this session only"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ask := &askCounter{answers: []Choice{ChoiceAllowAlways}}
			rec := &events.Recorder{}
			p := New(Options{Approval: onRequest, Server: servers(""), Asker: ask.asker(), Events: rec, Persist: tt.persist})

			if d := p.Decide(t.Context(), request("s1", "write_file")); !d.Approved {
				t.Fatalf("first call = %+v, want approved: a failed write must not undo the user's answer", d)
			}
			if got := events.Of[events.ApprovalDecision](rec)[0].Rationale; got != tt.note {
				t.Errorf("event rationale = %q, want %q", got, tt.note)
			}
			if d := p.Decide(t.Context(), request("s1", "write_file")); d.Step != StepSession || !d.Approved {
				t.Errorf("same session = %+v, want approved from session memory", d)
			}
			if d := p.Decide(t.Context(), request("s2", "write_file")); d.Approved {
				t.Errorf("new session = %+v, want asked again (and declined)", d)
			}
			if n := ask.count(); n != 2 {
				t.Errorf("asked %d times, want 2", n)
			}
		})
	}
}

func TestDecideCancelledWhileAsking(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	asking := make(chan struct{})
	rec := &events.Recorder{}
	p := New(Options{Approval: onRequest, Server: servers(""), Events: rec, Asker: &fakeAsker{
		AskApprovalF: func(ctx context.Context, _ Prompt) (Choice, error) {
			close(asking)
			<-ctx.Done()
			return ChoiceAllow, fmt.Errorf("ask approval: %w", ctx.Err())
		},
	}})
	go func() {
		<-asking
		cancel()
	}()
	d := p.Decide(ctx, request("s1", "write_file"))
	if want := (Decision{Step: "user", By: "user", Text: "user cancelled MCP tool call"}); d != want {
		t.Errorf("Decide = %+v, want %+v", d, want)
	}
	want := []events.ApprovalDecision{ev("user", "user", "denied", "user cancelled MCP tool call", "")}
	if diff := cmp.Diff(want, events.Of[events.ApprovalDecision](rec), cmpopts.IgnoreFields(events.ApprovalDecision{}, "At")); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestDecideConcurrent runs many calls at once (under -race) and checks
// that Persist is never entered twice at the same time.
func TestDecideConcurrent(t *testing.T) {
	var inFlight, overlaps, persisted atomic.Int32
	p := New(Options{
		Approval: onRequest,
		Server:   servers(""),
		Asker:    &fakeAsker{AskApprovalF: func(context.Context, Prompt) (Choice, error) { return ChoiceAllowAlways, nil }},
		Persist: func(string, string, string) error {
			if inFlight.Add(1) > 1 {
				overlaps.Add(1)
			}
			defer inFlight.Add(-1)
			persisted.Add(1)
			return nil
		},
		Events: &events.Recorder{},
	})
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			r := request(fmt.Sprintf("s%d", i), fmt.Sprintf("tool%d", i%8))
			if d := p.Decide(t.Context(), r); !d.Approved {
				t.Errorf("call %d = %+v, want approved", i, d)
			}
		})
	}
	wg.Wait()
	if n := overlaps.Load(); n != 0 {
		t.Errorf("Persist ran concurrently %d times", n)
	}
	if n := persisted.Load(); n < 8 {
		t.Errorf("Persist ran %d times, want at least once per tool (8)", n)
	}
}

func TestZeroDecisionDenies(t *testing.T) {
	var d Decision
	if d.Approved {
		t.Fatal("the zero Decision approves; it must deny")
	}
}

// TestSessionMemoryIgnoredOutsideAuto: an approval remembered while the
// tool was in mode auto does not carry over once its mode says "ask every
// time".
func TestSessionMemoryIgnoredOutsideAuto(t *testing.T) {
	var mode atomic.Value
	mode.Store(config.ModeAuto)
	ask := &askCounter{answers: []Choice{ChoiceAllowSession, ChoiceAllow}}
	p := New(Options{Approval: onRequest, Asker: ask.asker(), Server: func(name string) (config.Server, bool) {
		return servers(mode.Load().(config.ApprovalMode))(name)
	}})
	if d := p.Decide(t.Context(), request("s1", "write_file")); !d.Approved {
		t.Fatalf("first call = %+v, want approved", d)
	}
	mode.Store(config.ModePrompt)
	if d := p.Decide(t.Context(), request("s1", "write_file")); d.Step != StepUser || !d.Approved {
		t.Errorf("call in mode prompt = %+v, want asked again", d)
	}
	if n := ask.count(); n != 2 {
		t.Errorf("asked %d times, want 2", n)
	}
}
