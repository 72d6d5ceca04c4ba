package host_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host"
	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/exposure"
)

func call(t *testing.T, f *fixture, name, args string) exposure.CallResult {
	t.Helper()
	return f.h.NewStep("").Call(t.Context(), exposure.CallRequest{Upstream: f.up, Name: name, Arguments: []byte(args)})
}

func text(r exposure.CallResult) string {
	if r.Raw == nil || len(r.Raw.Content) == 0 {
		return ""
	}
	if tc, ok := r.Raw.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

func TestPolicyHookDeniesADestructiveCall(t *testing.T) {
	asker := &scripted{answers: []approval.Choice{approval.ChoiceAllow, approval.ChoiceAllow}}
	f := startHost(t, setup{asker: asker, top: `
plugin "policy" {
  kind = "hook"
  path = "{{BIN:plugins/toolgate-hook-policy}}"
  config {
    default = "ask"
    rule {
      annotations { destructive = true }
      decision = "deny"
      message  = "Deleting is disabled by policy."
    }
  }
}`, body: `tool "write_file" { approval_mode = "prompt" }`})
	if err := os.WriteFile(filepath.Join(f.root, "keep.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := call(t, f, "mcp__demo__delete_file", `{"path":"keep.txt"}`)
	if res.Status != events.CallDenied || res.Reached || text(res) != "Deleting is disabled by policy." {
		t.Fatalf("destructive call: %s reached=%v %q", res.Status, res.Reached, text(res))
	}
	if res.Decision.By != "policy" {
		t.Errorf("decided by %q, want the policy hook", res.Decision.By)
	}
	if slices.Contains(f.serverCalls(t), "delete_file") {
		t.Error("the server was contacted")
	}
	if _, err := os.Stat(filepath.Join(f.root, "keep.txt")); err != nil {
		t.Error("the file is gone")
	}
	// "ask" (the default here, for a non-destructive tool) falls through
	// to the user, who allows. (A tool without annotations counts as
	// destructive, as the MCP spec says.)
	if res := call(t, f, "mcp__demo__write_file", `{"path":"new.txt","content":"x"}`); res.Status != events.CallCompleted || len(asker.asked) != 1 {
		t.Errorf("ask rule: %s by %q at %q, asked %d: %q", res.Status, res.Decision.By, res.Decision.Step, len(asker.asked), text(res))
	}
}

// hookScript is a Codex-style permission hook, in bash: exit 2 denies,
// JSON on stdout decides or rewrites, empty stdout has no opinion.
const hookScript = `#!/usr/bin/env bash
input=$(cat)
field() { printf '%s' "$input" | sed -n 's/.*"'"$1"'"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' | head -n 1; }
event=$(field hook_event_name)
tool=$(field tool_name)
case "$tool" in
mcp__files__delete_*) echo "Deleting is not allowed by the project's hook." >&2; exit 2 ;;
esac
case "$event" in
PermissionRequest)
  case "$tool" in
  mcp__files__slow_write) printf '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}\n' ;;
  esac ;;
PreToolUse)
  case "$tool" in
  mcp__files__write_file)
    path=$(field path)
    case "$path" in
    /*) printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"path":"sandbox/%s","content":"%s"}}}\n' "${path##*/}" "$(field content)" ;;
    esac ;;
  esac ;;
esac
exit 0
`

func TestCommandHookScriptAllowsDeniesAndRewrites(t *testing.T) {
	script := filepath.Join(t.TempDir(), "hook.sh")
	if err := os.WriteFile(script, []byte(hookScript), 0o755); err != nil {
		t.Fatal(err)
	}
	asker := &scripted{} // every question is cancelled: only the hook can allow
	f := startHost(t, setup{asker: asker, server: "files", top: `
plugin "project" {
  kind = "hook"
  path = "{{BIN:plugins/toolgate-hook-command}}"
  config {
    command = ["bash", "` + script + `"]
  }
}`})
	if err := os.Mkdir(filepath.Join(f.root, "sandbox"), 0o755); err != nil {
		t.Fatal(err)
	}

	// Allow: a call that needs approval runs without asking anyone.
	if res := call(t, f, "mcp__files__slow_write", `{"ms":1}`); res.Status != events.CallCompleted || len(asker.asked) != 0 {
		t.Fatalf("allowed call: %s %q, asked %d", res.Status, text(res), len(asker.asked))
	}
	// Deny with exit 2: the stderr text is the model's.
	res := call(t, f, "mcp__files__delete_file", `{"path":"x"}`)
	if res.Status != events.CallDenied || res.Reached || !strings.Contains(text(res), "Deleting is not allowed by the project's hook.") {
		t.Fatalf("denied call: %s %q", res.Status, text(res))
	}
	// Rewrite: the write lands in sandbox/, and the audit records before/after.
	res = call(t, f, "mcp__files__write_file", `{"path":"/etc/evil","content":"hi"}`)
	if res.Status != events.CallCompleted {
		t.Fatalf("rewritten call: %s %q", res.Status, text(res))
	}
	if b, err := os.ReadFile(filepath.Join(f.root, "sandbox", "evil")); err != nil || string(b) != "hi" {
		t.Fatalf("sandbox/evil: %q %v", b, err)
	}
	var rewrites []events.ApprovalDecision
	for _, e := range events.Of[events.ApprovalDecision](f.rec) {
		if e.After != nil {
			rewrites = append(rewrites, e)
		}
	}
	if len(rewrites) != 1 || !strings.Contains(string(rewrites[0].Before), "/etc/evil") || !strings.Contains(string(rewrites[0].After), "sandbox/evil") {
		t.Errorf("rewrite audit = %+v", rewrites)
	}
	if got := f.serverCalls(t); slices.Contains(got, "delete_file") {
		t.Errorf("server calls %v", got)
	}
}

func TestFailingHooksDenyOrFallThrough(t *testing.T) {
	for _, tt := range []struct {
		name, plugin, onError string
		denied                bool
	}{
		{"crashing hook denies", "testplugins/hook-crash", "deny", true},
		{"slow hook denies", "testplugins/hook-slow", "deny", true},
		{"crashing hook skipped", "testplugins/hook-crash", "skip", false},
		{"slow hook skipped", "testplugins/hook-slow", "skip", false},
		{"garbage hook denies", "testplugins/hook-garbage", "deny", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := startHost(t, setup{top: `
approval { reviewer = "guardian" }
plugin "broken" {
  kind     = "hook"
  path     = "{{BIN:` + tt.plugin + `}}"
  timeout  = "300ms"
  on_error = "` + tt.onError + `"
}
plugin "guardian" {
  kind = "guardian"
  path = "{{BIN:plugins/toolgate-guardian}}"
  config {
    engine    = "rules"
    workspace = "{{ROOT}}"
  }
}`})
			res := call(t, f, "mcp__demo__slow_write", `{"ms":1}`)
			if tt.denied {
				if res.Status != events.CallDenied || res.Reached || res.Decision.By != "broken" {
					t.Fatalf("%s: %s by %q: %q", tt.name, res.Status, res.Decision.By, text(res))
				}
				return
			}
			// Skipped: the Guardian decides (and never the broken hook).
			if res.Decision.Step != approval.StepReviewer {
				t.Fatalf("%s: decided at %q by %q: %q", tt.name, res.Decision.Step, res.Decision.By, text(res))
			}
		})
	}
}

func TestGuardianRulesEngine(t *testing.T) {
	f := startHost(t, setup{top: `
approval { reviewer = "guardian" }
plugin "guardian" {
  kind = "guardian"
  path = "{{BIN:plugins/toolgate-guardian}}"
  config {
    engine    = "rules"
    workspace = "{{ROOT}}"
  }
}`, body: `tool "write_file" { approval_mode = "prompt" }
  tool "echo" { approval_mode = "prompt" }`})

	res := call(t, f, "mcp__demo__write_file", `{"path":"/etc/toolgate-test","content":"x"}`)
	if res.Status != events.CallDenied || res.Reached || !strings.HasPrefix(text(res), "This action was rejected due to unacceptable risk.") {
		t.Fatalf("write outside the workspace: %s %q", res.Status, text(res))
	}
	res = call(t, f, "mcp__demo__echo", `{"text":"hello"}`)
	if res.Status != events.CallCompleted || res.Decision.Step != approval.StepReviewer {
		t.Fatalf("read-only call: %s at %q: %q", res.Status, res.Decision.Step, text(res))
	}
	var assessed int
	for _, e := range events.Of[events.ApprovalDecision](f.rec) {
		if approval.DecisionStep(e.Step) == approval.StepReviewer && e.RiskLevel != "" {
			assessed++
		}
	}
	if assessed != 2 {
		t.Errorf("%d assessments with a risk level in the events, want 2", assessed)
	}
}

// switchHook is a PermissionRequest hook whose verdict a test sets.
type switchHook struct {
	verdict atomic.Value // string: allow | deny | none | fail
	calls   atomic.Int32
}

func (h *switchHook) Name() string            { return "switch" }
func (h *switchHook) OnError() config.OnError { return config.OnErrorDeny }
func (h *switchHook) PermissionRequest(context.Context, approval.Request) (approval.HookVerdict, error) {
	h.calls.Add(1)
	switch h.verdict.Load() {
	case "allow":
		return approval.HookVerdict{Decision: approval.HookAllow}, nil
	case "deny":
		return approval.HookVerdict{Decision: approval.HookDeny, Message: "hook says no"}, nil
	case "fail":
		return approval.HookVerdict{}, context.DeadlineExceeded
	}
	return approval.HookVerdict{}, nil
}

type switchReviewer struct{ outcome atomic.Value }

func (r *switchReviewer) Name() string { return "guardian" }
func (r *switchReviewer) Review(context.Context, approval.Request) (approval.Assessment, error) {
	return approval.Assessment{Outcome: r.outcome.Load().(string), RiskLevel: "low", Rationale: "test"}, nil
}

// TestApprovalOrderEndToEnd drives one call through every combination of
// mode, remembered approval, hook verdict and reviewer, through a real
// server, and checks who decided and that only approved calls reached it.
func TestApprovalOrderEndToEnd(t *testing.T) {
	hook := &switchHook{}
	rev := &switchReviewer{}
	asker := &scripted{}
	for _, reviewer := range []string{"user", "guardian"} {
		top := ""
		if reviewer == "guardian" {
			// The block satisfies the config; Options.Reviewer (the
			// switchable fake) takes its place.
			top = `approval { reviewer = "guardian" }
plugin "guardian" {
  kind = "guardian"
  path = "{{BIN:plugins/toolgate-guardian}}"
}`
		}
		f := startHost(t, setup{asker: asker, top: top,
			opts: host.Options{Hooks: []approval.Hook{hook}, Reviewer: rev},
			body: `tool "pid" { approval_mode = "approve" }
  tool "slow" { approval_mode = "prompt" }`})
		tools := map[config.ApprovalMode]string{
			config.ModeApprove: "mcp__demo__pid",
			config.ModeAuto:    "mcp__demo__slow_write",
			config.ModePrompt:  "mcp__demo__slow",
		}
		for mode, tool := range tools {
			for _, remembered := range []bool{false, true} {
				for _, verdict := range []string{"allow", "deny", "none", "fail"} {
					for _, outcome := range []string{"allow", "deny"} {
						name := strings.Join([]string{reviewer, string(mode), map[bool]string{true: "remembered", false: "fresh"}[remembered], "hook-" + verdict, "reviewer-" + outcome}, "/")
						t.Run(name, func(t *testing.T) {
							session := exposure.NewID("s")
							step := f.h.NewStep(session)
							if remembered {
								// The user allows for this session first (hook silent, user asked).
								hook.verdict.Store("none")
								rev.outcome.Store("allow")
								asker.mu.Lock()
								asker.answers = []approval.Choice{approval.ChoiceAllowSession}
								asker.mu.Unlock()
								if reviewer == "user" {
									step.Call(t.Context(), exposure.CallRequest{Upstream: f.up, Name: tool, Arguments: []byte(`{"ms":1}`)})
								}
							}
							hook.verdict.Store(verdict)
							rev.outcome.Store(outcome)
							asker.mu.Lock()
							asker.answers = []approval.Choice{approval.ChoiceDecline}
							asker.mu.Unlock()
							hook.calls.Store(0)
							before := len(f.serverCalls(t))
							res := step.Call(t.Context(), exposure.CallRequest{Upstream: f.up, Name: tool, Arguments: []byte(`{"ms":1}`)})
							reached := len(f.serverCalls(t)) > before

							// The expected decider, straight from ARCHITECTURE §8.
							wantStep, wantOK := approval.DecisionStep(""), false
							switch {
							case mode == config.ModeApprove:
								wantStep, wantOK = approval.StepMode, true
							case remembered && mode == config.ModeAuto && reviewer == "user":
								wantStep, wantOK = approval.StepSession, true
							case verdict == "deny" || verdict == "fail":
								wantStep, wantOK = approval.StepHook, false
							case verdict == "allow":
								wantStep, wantOK = approval.StepHook, true
							case reviewer == "guardian":
								wantStep, wantOK = approval.StepReviewer, outcome == "allow"
							default:
								wantStep, wantOK = approval.StepUser, false // the user declines
							}
							if res.Decision.Step != wantStep || res.Decision.Approved != wantOK {
								t.Fatalf("decided at %q approved=%v (by %q: %q), want %q approved=%v",
									res.Decision.Step, res.Decision.Approved, res.Decision.By, text(res), wantStep, wantOK)
							}
							if reached != wantOK || res.Reached != wantOK {
								t.Fatalf("server reached=%v, want %v", reached, wantOK)
							}
							if wantStep == approval.StepSession && hook.calls.Load() != 0 {
								t.Error("a remembered approval still asked the PermissionRequest hooks")
							}
						})
					}
				}
			}
		}
	}
}
