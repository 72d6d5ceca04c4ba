package command_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/plugins/hooks/internal/command"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/hook"
	"github.com/toolgate/toolgate/sdk/plugintest"
)

func ptr[T any](v T) *T { return &v }

func script(t testing.TB, name string) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// configJSON is the config the host would send for a bash script.
func configJSON(t testing.TB, scriptName string, extra map[string]any) json.RawMessage {
	t.Helper()
	cfg := map[string]any{"command": []string{"bash", script(t, scriptName)}}
	for k, v := range extra {
		cfg[k] = v
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func configured(t testing.TB, cfg json.RawMessage) *hook.Client {
	t.Helper()
	c := plugintest.Hook(t, command.New(nil))
	configure(t, c, cfg)
	return c
}

func configure(t testing.TB, c *hook.Client, cfg json.RawMessage) {
	t.Helper()
	diags, err := c.Configure(context.Background(), cfg)
	if err != nil || len(diags) > 0 {
		t.Fatalf("Configure(%s) = %v, %v", cfg, diags, err)
	}
}

func call(server, tool, args string) hook.Request {
	return hook.Request{
		Server: server, Tool: tool, ModelName: "mcp__" + server + "__" + tool, Arguments: json.RawMessage(args),
		Policy: "on-request", ApprovalMode: "auto", Permissions: "workspace-write",
		SessionID: "session-1", CallID: "call-1", Cwd: os.TempDir(),
	}
}

// TestCodexScript runs an unchanged Codex hook script for both events.
func TestCodexScript(t *testing.T) {
	c := configured(t, configJSON(t, "codex-hook.sh", nil))
	const deleteMsg = "Deleting is not allowed by the project's hook; ask the user to do it."
	for _, tt := range []struct {
		name     string
		req      hook.Request
		wantPerm hook.PermissionResult
		wantPre  hook.PreToolUseResult
	}{
		{"JSON allow", call("files", "read_file", `{"path":"a.txt"}`), hook.Allow(""), hook.Continue()},
		{"deny with exit 2", call("files", "delete_file", `{"path":"a.txt"}`), hook.Deny(deleteMsg), hook.Block(deleteMsg)},
		{"JSON deny", call("web", "fetch", `{"url":"https://x.test"}`), hook.Deny("Network tools need the user to approve them."), hook.Continue()},
		{"rewrite", call("files", "write_file", `{"path":"/etc/motd","content":"hello"}`), hook.NoDecision(),
			hook.Rewrite(json.RawMessage(`{"path":"sandbox/motd","content":"hello"}`), "writes outside the project go to sandbox/")},
		{"legacy block", call("shell", "run", `{"command":"ls"}`), hook.NoDecision(), hook.Block("Shell tools are disabled in this project.")},
		{"no decision", call("files", "write_file", `{"path":"src/a.go","content":"x"}`), hook.NoDecision(), hook.Continue()},
		{"no arguments", call("files", "list_dir", ``), hook.Allow(""), hook.Continue()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			perm, err := c.PermissionRequest(t.Context(), tt.req)
			if err != nil {
				t.Fatalf("PermissionRequest: %v", err)
			}
			if diff := cmp.Diff(tt.wantPerm, perm); diff != "" {
				t.Errorf("PermissionRequest (-want +got):\n%s", diff)
			}
			pre, err := c.PreToolUse(t.Context(), tt.req)
			if err != nil {
				t.Fatalf("PreToolUse: %v", err)
			}
			if diff := cmp.Diff(tt.wantPre, pre); diff != "" {
				t.Errorf("PreToolUse (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAnswers(t *testing.T) {
	c := configured(t, configJSON(t, "edge-cases.sh", map[string]any{"env": map[string]string{"SECRET_TOKEN": "tok-very-secret-123"}}))
	demo := func(name string) hook.Request { return call("demo", name, `{}`) }
	for _, tt := range []struct {
		name    string
		pre     bool // PreToolUse instead of PermissionRequest
		want    any  // a result, or nil when an error is expected
		wantErr []string
	}{
		{name: "empty stdout is no decision", want: hook.NoDecision()},
		{name: "empty stdout continues", pre: true, want: hook.Continue()},
		{name: "stop denies", want: hook.Deny("the hook stopped this call")},
		{name: "stop blocks", pre: true, want: hook.Block("the hook stopped this call")},
		{name: "ask continues", pre: true, want: hook.Continue()},
		{name: "deny wins over rewrite", pre: true, want: hook.Block("no")},
		{name: "invalid JSON fails", wantErr: []string{"not a JSON object"}},
		{name: "other exit codes fail", wantErr: []string{"exited 1", "boom: the hook crashed"}},
		{name: "exit 2 without message fails", wantErr: []string{"exited 2", "stderr"}},
		{name: "secrets are redacted", wantErr: []string{"[redacted]"}},
		{name: "event mismatch fails", pre: true, wantErr: []string{`"PermissionRequest" in answer to a PreToolUse`}},
		{name: "reserved updatedInput fails", wantErr: []string{"reserved"}},
		{name: "reserved interrupt fails", wantErr: []string{"reserved"}},
		{name: "unknown behavior fails", wantErr: []string{`"maybe"`}},
		{name: "non-object rewrite fails", pre: true, wantErr: []string{"updatedInput must be a JSON object"}},
		{name: "two JSON values fail", wantErr: []string{"more than one JSON value"}},
		{name: "too much output fails", wantErr: []string{"more than 1048576 bytes"}},
	} {
		tool := map[string]string{
			"empty stdout is no decision": "quiet", "empty stdout continues": "quiet", "stop denies": "stop", "stop blocks": "stop",
			"ask continues": "ask", "deny wins over rewrite": "deny_rewrite", "invalid JSON fails": "garbage",
			"other exit codes fail": "crash", "exit 2 without message fails": "silent_deny", "secrets are redacted": "secret",
			"event mismatch fails": "mismatch", "reserved updatedInput fails": "reserved", "reserved interrupt fails": "interrupt",
			"unknown behavior fails": "bad_behavior", "non-object rewrite fails": "bad_rewrite", "two JSON values fail": "two_values",
			"too much output fails": "big",
		}[tt.name]
		t.Run(tt.name, func(t *testing.T) {
			var got any
			var err error
			if tt.pre {
				got, err = c.PreToolUse(t.Context(), demo(tool))
			} else {
				got, err = c.PermissionRequest(t.Context(), demo(tool))
			}
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
				return
			}
			var pe *sdk.PluginError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v (%T), want a *sdk.PluginError (a failed hook)", err, err)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(pe.Msg, want) {
					t.Errorf("error %q lacks %q", pe.Msg, want)
				}
			}
			if strings.Contains(pe.Msg, "tok-very-secret-123") {
				t.Errorf("error %q leaks an env value", pe.Msg)
			}
		})
	}
}

func TestTimeoutIsDeadlineError(t *testing.T) {
	c := configured(t, configJSON(t, "edge-cases.sh", map[string]any{"timeout": "200ms"}))
	_, err := c.PermissionRequest(t.Context(), call("demo", "slow", `{}`))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
}

// TestInput checks the exact JSON a program reads, its environment (only
// PATH, HOME and the configured env) and its working directory.
func TestInput(t *testing.T) {
	t.Setenv("TOOLGATE_TEST_LEAK", "must-not-leak")
	dump := t.TempDir()
	cwd := t.TempDir()
	c := configured(t, configJSON(t, "edge-cases.sh", map[string]any{"env": map[string]string{"DUMP_DIR": dump, "EXTRA": "yes"}}))
	req := call("demo", "dump", `{"path": "a.txt", "n": 1}`)
	req.Cwd = cwd
	req.Policy = "never"
	req.Annotations = &sdk.Annotations{ReadOnly: true, OpenWorld: ptr(false), Title: "Dump"}
	req.ToolDescription = "Dumps its input."
	if _, err := c.PermissionRequest(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(readFile(t, dump, "input.json"), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"session_id": "session-1", "turn_id": "call-1", "tool_use_id": "call-1", "transcript_path": nil, "cwd": cwd,
		"hook_event_name": "PermissionRequest", "model": "", "permission_mode": "bypassPermissions",
		"tool_name": "mcp__demo__dump", "tool_input": map[string]any{"path": "a.txt", "n": float64(1)},
		"toolgate": map[string]any{
			"server": "demo", "tool": "dump", "tool_description": "Dumps its input.",
			"annotations":   map[string]any{"readOnlyHint": true, "openWorldHint": false, "idempotentHint": false, "title": "Dump"},
			"approval_mode": "auto", "policy": "never", "permissions": "workspace-write",
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stdin JSON (-want +got):\n%s", diff)
	}

	env := string(readFile(t, dump, "env"))
	for _, want := range []string{"EXTRA=yes", "DUMP_DIR=" + dump, "PATH=" + os.Getenv("PATH")} {
		if !strings.Contains(env, want+"\n") {
			t.Errorf("environment lacks %q:\n%s", want, env)
		}
	}
	if strings.Contains(env, "TOOLGATE_TEST_LEAK") {
		t.Errorf("the plugin's environment leaked into the program:\n%s", env)
	}
	if pwd := strings.TrimSpace(string(readFile(t, dump, "pwd"))); pwd != cwd {
		t.Errorf("working directory = %q, want the call's cwd %q", pwd, cwd)
	}
}

func readFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMatcher(t *testing.T) {
	c := configured(t, configJSON(t, "edge-cases.sh", map[string]any{"matcher": "^mcp__files__"}))
	// edge-cases.sh fails for every tool it does not know: a call the
	// matcher skips must not run it.
	if res, err := c.PermissionRequest(t.Context(), call("demo", "crash", `{}`)); err != nil || res != hook.NoDecision() {
		t.Errorf("unmatched tool: %+v, %v; want no decision without running the program", res, err)
	}
	if _, err := c.PermissionRequest(t.Context(), call("files", "anything", `{}`)); err == nil {
		t.Error("matched tool: want the program to run (and fail on the unknown case)")
	}
}

func TestNotConfigured(t *testing.T) {
	c := plugintest.Hook(t, command.New(nil))
	if _, err := c.PermissionRequest(t.Context(), call("a", "b", `{}`)); !errors.Is(err, sdk.ErrNotConfigured) {
		t.Errorf("err = %v, want ErrNotConfigured", err)
	}
}

func TestConfigureDiagnostics(t *testing.T) {
	notExecutable := filepath.Join(t.TempDir(), "hook.sh")
	if err := os.WriteFile(notExecutable, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		cfg  string
		want [][]string
	}{
		{"missing command", `{}`, [][]string{{"command"}}},
		{"empty program", `{"command": [""]}`, [][]string{{"command"}}},
		{"program not in PATH", `{"command": ["no-such-program-xyz"]}`, [][]string{{"command"}}},
		{"program file missing", `{"command": ["./no/such/hook.sh"]}`, [][]string{{"command"}}},
		{"not executable", `{"command": ["` + notExecutable + `"]}`, [][]string{{"command"}}},
		{"bad timeout", `{"command": ["bash"], "timeout": "soon"}`, [][]string{{"timeout"}}},
		{"negative timeout", `{"command": ["bash"], "timeout": "-1s"}`, [][]string{{"timeout"}}},
		{"bad matcher", `{"command": ["bash"], "matcher": "mcp__(files"}`, [][]string{{"matcher"}}},
		{"bad env name", `{"command": ["bash"], "env": {"1BAD": "x"}}`, [][]string{{"env", "1BAD"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := plugintest.Hook(t, command.New(nil))
			diags, err := c.Configure(t.Context(), json.RawMessage(tt.cfg))
			if err != nil {
				t.Fatal(err)
			}
			var got [][]string
			for _, d := range diags {
				if d.Severity != sdk.SeverityError || d.Detail == "" {
					t.Errorf("diagnostic %v: want an error saying how to fix it", d)
				}
				got = append(got, d.AttributePath)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("attribute paths (-want +got):\n%s\n%v", diff, diags)
			}
		})
	}
}

// TestExecutableScript runs the script by its path, as a Codex hooks.json
// command would, rather than through bash.
func TestExecutableScript(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "codex-hook.sh")
	if err := os.WriteFile(exe, readFile(t, "testdata", "codex-hook.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := configured(t, json.RawMessage(`{"command": ["`+exe+`"]}`))
	if res, err := c.PermissionRequest(t.Context(), call("files", "read_file", `{}`)); err != nil || res.Decision != hook.DecisionAllow {
		t.Errorf("PermissionRequest = %+v, %v; want allow", res, err)
	}
}

// TestBinary drives the built plugin as the host would, with the Codex
// script: allow, deny by exit 2, rewrite, and a timeout.
func TestBinary(t *testing.T) {
	c := plugintest.RunBinary(t, testbin.Path(t, binaryName), sdk.KindHook).(*hook.Client)
	info, err := c.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !info.Has(string(hook.EventPermissionRequest)) || !info.Has(string(hook.EventPreToolUse)) || info.Has(string(hook.EventPostToolUse)) {
		t.Errorf("capabilities = %v", info.Capabilities)
	}
	configure(t, c, configJSON(t, "codex-hook.sh", nil))
	if res, err := c.PermissionRequest(t.Context(), call("files", "read_file", `{"path":"a"}`)); err != nil || res.Decision != hook.DecisionAllow {
		t.Errorf("read: %+v, %v; want allow", res, err)
	}
	if res, err := c.PermissionRequest(t.Context(), call("files", "delete_file", `{"path":"a"}`)); err != nil || res.Decision != hook.DecisionDeny || !strings.Contains(res.Message, "Deleting is not allowed") {
		t.Errorf("delete: %+v, %v; want deny with the script's message", res, err)
	}
	res, err := c.PreToolUse(t.Context(), call("files", "write_file", `{"path":"../out.txt","content":"x"}`))
	if err != nil || res.Action != hook.ActionRewrite || string(res.Arguments) != `{"path":"sandbox/out.txt","content":"x"}` {
		t.Errorf("write outside: %+v, %v; want a rewrite into sandbox/", res, err)
	}
	configure(t, c, configJSON(t, "edge-cases.sh", map[string]any{"timeout": "200ms"}))
	if _, err := c.PreToolUse(t.Context(), call("demo", "slow", `{}`)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("slow program: err = %v, want context.DeadlineExceeded", err)
	}
}

// BenchmarkPermissionRequest measures one decision by a bash script: the
// cost of spawning the program dominates.
func BenchmarkPermissionRequest(b *testing.B) {
	c := configured(b, configJSON(b, "codex-hook.sh", nil))
	req := call("files", "read_file", `{"path":"a.txt"}`)
	ctx := context.Background()
	for b.Loop() {
		res, err := c.PermissionRequest(ctx, req)
		if err != nil || res.Decision != hook.DecisionAllow {
			b.Fatalf("PermissionRequest = %+v, %v", res, err)
		}
	}
}

// BenchmarkPermissionRequestTrue is the floor of the command hook: the
// program is true(1), so the cost is one process start plus the protocol.
func BenchmarkPermissionRequestTrue(b *testing.B) {
	c := configured(b, json.RawMessage(`{"command": ["true"]}`))
	req := call("files", "read_file", `{"path":"a.txt"}`)
	ctx := context.Background()
	for b.Loop() {
		if res, err := c.PermissionRequest(ctx, req); err != nil || res.Decision != hook.DecisionNone {
			b.Fatalf("PermissionRequest = %+v, %v", res, err)
		}
	}
}
