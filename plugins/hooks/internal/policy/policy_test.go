package policy_test

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
	"github.com/toolgate/toolgate/plugins/hooks/internal/policy"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/hook"
	"github.com/toolgate/toolgate/sdk/plugintest"
)

func ptr[T any](v T) *T { return &v }

// configured serves a policy in-process, configured with cfg (the JSON the
// host would send), and fails the test on any diagnostic.
func configured(t testing.TB, cfg string) *hook.Client {
	t.Helper()
	c := plugintest.Hook(t, policy.New(nil))
	diags, err := c.Configure(context.Background(), json.RawMessage(cfg))
	if err != nil {
		t.Fatalf("Configure: %v", err)
	}
	if len(diags) > 0 {
		t.Fatalf("Configure diagnostics: %v", diags)
	}
	return c
}

// call is a request for tool on server with args, in cwd.
func call(server, tool, args, cwd string, ann *sdk.Annotations) hook.Request {
	return hook.Request{
		Server: server, Tool: tool, ModelName: "mcp__" + server + "__" + tool,
		Arguments: json.RawMessage(args), Annotations: ann, Cwd: cwd,
		Policy: "on-request", ApprovalMode: "auto", SessionID: "s", CallID: "c",
	}
}

// outcome is both events' answers for one request, for compact tables.
type outcome struct {
	Permission hook.Decision
	PermMsg    string
	Pre        hook.Action
	PreMsg     string
}

func decide(t *testing.T, c *hook.Client, req hook.Request) outcome {
	t.Helper()
	perm, err := c.PermissionRequest(t.Context(), req)
	if err != nil {
		t.Fatalf("PermissionRequest: %v", err)
	}
	pre, err := c.PreToolUse(t.Context(), req)
	if err != nil {
		t.Fatalf("PreToolUse: %v", err)
	}
	return outcome{Permission: perm.Decision, PermMsg: perm.Message, Pre: pre.Action, PreMsg: pre.Reason}
}

var (
	allowed = outcome{Permission: hook.DecisionAllow, Pre: hook.ActionContinue}
	asked   = outcome{Permission: hook.DecisionNone, Pre: hook.ActionContinue}
)

func denied(msg string) outcome {
	return outcome{Permission: hook.DecisionDeny, PermMsg: msg, Pre: hook.ActionBlock, PreMsg: msg}
}

// ignoreAllowMessage compares allow outcomes by decision only.
var ignoreAllowMessage = cmp.FilterPath(func(p cmp.Path) bool {
	return p.Last().String() == ".PermMsg"
}, cmp.Comparer(func(a, b string) bool { return true }))

func TestRules(t *testing.T) {
	work := t.TempDir()
	outsideDir := t.TempDir()
	if err := os.Symlink(outsideDir, filepath.Join(work, "escape")); err != nil {
		t.Fatal(err)
	}
	cfg := `{
	  "default": "ask",
	  "rule": [
	    {"name": "reads", "annotations": {"read_only": true}, "decision": "allow"},
	    {"tool": "delete_*", "decision": "deny", "message": "deleting is not allowed"},
	    {"tool": "admin/*", "decision": "deny", "message": "no admin tools"},
	    {"tool": "ops/**", "decision": "deny", "message": "no ops tools"},
	    {"server": "files", "argument": [{"name": "path", "outside_dir": "."}], "decision": "deny", "message": "stay in the workspace"},
	    {"server": "web", "argument": [{"name": "url", "host_not_in": ["example.com", "*.example.org"]}], "decision": "deny", "message": "host not allowed"},
	    {"tool": "run", "argument": [{"name": "command", "regex": "rm\\s+-rf"}], "decision": "deny", "message": "no rm -rf"},
	    {"annotations": {"destructive": true, "open_world": true}, "decision": "deny", "message": "destructive open-world tool"},
	    {"server": "trusted", "decision": "allow", "message": "trusted server"},
	    {"server": "ci", "argument": [{"name": "*", "regex": "(?i)production"}], "decision": "deny", "message": "not production"}
	  ]
	}`
	c := configured(t, cfg)
	readOnly := &sdk.Annotations{ReadOnly: true}
	writer := &sdk.Annotations{Destructive: ptr(false), OpenWorld: ptr(false)}
	for _, tt := range []struct {
		name string
		req  hook.Request
		want outcome
	}{
		{"read-only annotation allows", call("files", "read_file", `{"path":"/etc/passwd"}`, work, readOnly), allowed},
		{"tool glob denies", call("files", "delete_file", `{"path":"a"}`, work, writer), denied("deleting is not allowed")},
		{"* matches within a segment", call("other", "admin/reset", `{}`, work, writer), denied("no admin tools")},
		{"* does not cross /", call("other", "admin/users/reset", `{}`, work, writer), asked},
		{"** crosses /", call("other", "ops/db/drop", `{}`, work, writer), denied("no ops tools")},
		{"path inside the workspace asks", call("files", "write_file", `{"path":"sub/a.txt"}`, work, writer), asked},
		{"absolute path outside denies", call("files", "write_file", `{"path":"/etc/passwd"}`, work, writer), denied("stay in the workspace")},
		{"dot dot escape denies", call("files", "write_file", `{"path":"../x"}`, work, writer), denied("stay in the workspace")},
		{"symlink escape denies", call("files", "write_file", `{"path":"escape/x"}`, work, writer), denied("stay in the workspace")},
		{"one path of a list outside denies", call("files", "move", `{"path":["a","/tmp/b"]}`, work, writer), denied("stay in the workspace")},
		{"missing path argument asks", call("files", "write_file", `{"content":"x"}`, work, writer), asked},
		{"listed host asks", call("web", "fetch", `{"url":"https://example.com/a"}`, work, writer), asked},
		{"wildcard host asks", call("web", "fetch", `{"url":"https://api.example.org/a"}`, work, writer), asked},
		{"unlisted host denies", call("web", "fetch", `{"url":"https://evil.test/a"}`, work, writer), denied("host not allowed")},
		{"regex denies", call("shell", "run", `{"command":"rm  -rf /"}`, work, writer), denied("no rm -rf")},
		{"regex miss asks", call("shell", "run", `{"command":"ls -l"}`, work, writer), asked},
		{"undeclared annotations count as destructive open-world", call("shell", "exec", `{}`, work, nil), denied("destructive open-world tool")},
		{"server glob allows", call("trusted", "exec", `{}`, work, writer), allowed},
		{"star argument searches nested strings", call("ci", "deploy", `{"target":{"env":["staging","Production"]}}`, work, writer), denied("not production")},
		{"no rule matches: default ask", call("other", "exec", `{}`, work, writer), asked},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, decide(t, c, tt.req), ignoreAllowMessage); diff != "" {
				t.Errorf("decision mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFirstMatchWinsAndDefault(t *testing.T) {
	c := configured(t, `{
	  "default": "deny",
	  "default_message": "not on the allow list",
	  "rule": [
	    {"tool": "write_*", "decision": "allow"},
	    {"tool": "write_secret", "decision": "deny"}
	  ]
	}`)
	if got := decide(t, c, call("files", "write_secret", `{}`, "/", nil)); got.Permission != hook.DecisionAllow {
		t.Errorf("write_secret: the earlier allow rule must win, got %+v", got)
	}
	if diff := cmp.Diff(denied("not on the allow list"), decide(t, c, call("files", "read", `{}`, "/", nil))); diff != "" {
		t.Errorf("default deny (-want +got):\n%s", diff)
	}
}

func TestDefaultDenyMessageNamesRuleAndFix(t *testing.T) {
	c := configured(t, `{"rule": [{"name": "no-drop", "tool": "drop_table", "decision": "deny"}]}`)
	got := decide(t, c, call("db", "drop_table", `{}`, "/", nil))
	for _, want := range []string{`rule "no-drop"`, "drop_table", "db", "ask the user"} {
		if !strings.Contains(got.PermMsg, want) || !strings.Contains(got.PreMsg, want) {
			t.Errorf("deny message %q lacks %q", got.PermMsg, want)
		}
	}
}

func TestEvents(t *testing.T) {
	c := configured(t, `{"rule": [
	  {"tool": "a", "decision": "deny", "events": ["pre_tool_use"]},
	  {"tool": "b", "decision": "deny", "events": ["permission_request"]},
	  {"tool": "c", "decision": "allow", "events": ["permission_request"]}
	]}`)
	for _, tt := range []struct {
		tool string
		want outcome
	}{
		{"a", outcome{Permission: hook.DecisionNone, Pre: hook.ActionBlock}},
		{"b", outcome{Permission: hook.DecisionDeny, Pre: hook.ActionContinue}},
		{"c", outcome{Permission: hook.DecisionAllow, Pre: hook.ActionContinue}},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			got := decide(t, c, call("s", tt.tool, `{}`, "/", nil))
			got.PermMsg, got.PreMsg = "", ""
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestAnnotationDefaults(t *testing.T) {
	c := configured(t, `{"rule": [{"annotations": {"destructive": false}, "decision": "allow"}]}`)
	for _, tt := range []struct {
		name string
		ann  *sdk.Annotations
		want hook.Decision
	}{
		{"no annotations are destructive", nil, hook.DecisionNone},
		{"read-only implies not destructive", &sdk.Annotations{ReadOnly: true}, hook.DecisionAllow},
		{"explicit false", &sdk.Annotations{Destructive: ptr(false)}, hook.DecisionAllow},
		{"read-only but declared destructive", &sdk.Annotations{ReadOnly: true, Destructive: ptr(true)}, hook.DecisionNone},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := decide(t, c, call("s", "t", `{}`, "/", tt.ann)).Permission; got != tt.want {
				t.Errorf("decision = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestOutsideDirFailsClosedWithoutCwd(t *testing.T) {
	c := configured(t, `{"rule": [{"argument": [{"name": "path", "outside_dir": "."}], "decision": "deny"}]}`)
	if got := decide(t, c, call("s", "t", `{"path":"a.txt"}`, "", nil)); got.Permission != hook.DecisionDeny {
		t.Errorf("a relative path with no cwd must count as outside, got %+v", got)
	}
}

func TestConfigureDiagnostics(t *testing.T) {
	for _, tt := range []struct {
		name, cfg string
		want      []sdk.Diagnostic
	}{
		{"unknown default", `{"default": "maybe"}`, []sdk.Diagnostic{{Summary: "Unknown decision", AttributePath: []string{"default"}}}},
		{"unknown decision", `{"rule": [{"tool": "a", "decision": "allow"}, {"tool": "b", "decision": "block"}]}`,
			[]sdk.Diagnostic{{Summary: "Unknown decision", AttributePath: []string{"rule", "1", "decision"}}}},
		{"missing decision", `{"rule": [{"tool": "a"}]}`, []sdk.Diagnostic{{Summary: "Missing decision", AttributePath: []string{"rule", "0", "decision"}}}},
		{"bad regex", `{"rule": [{"tool": "a", "decision": "deny"}, {"tool": "b", "decision": "deny"}, {"tool": "c", "decision": "deny", "argument": [{"name": "x", "regex": "(unclosed"}]}]}`,
			[]sdk.Diagnostic{{Summary: "Invalid regular expression", AttributePath: []string{"rule", "2", "argument", "0", "regex"}}}},
		{"bad server glob", `{"rule": [{"server": "git[hub", "decision": "deny"}]}`, []sdk.Diagnostic{{Summary: "Invalid glob", AttributePath: []string{"rule", "0", "server"}}}},
		{"bad tool glob", `{"rule": [{"tool": "a\\", "decision": "deny"}]}`, []sdk.Diagnostic{{Summary: "Invalid glob", AttributePath: []string{"rule", "0", "tool"}}}},
		{"empty rule", `{"rule": [{"decision": "deny"}]}`, []sdk.Diagnostic{{Summary: "Rule has no condition", AttributePath: []string{"rule", "0"}}}},
		{"empty annotations", `{"rule": [{"annotations": {}, "decision": "deny"}]}`, []sdk.Diagnostic{{Summary: "Empty annotations block", AttributePath: []string{"rule", "0", "annotations"}}}},
		{"unknown event", `{"rule": [{"tool": "a", "decision": "deny", "events": ["post_tool_use"]}]}`, []sdk.Diagnostic{{Summary: "Unknown event", AttributePath: []string{"rule", "0", "events"}}}},
		{"empty events", `{"rule": [{"tool": "a", "decision": "deny", "events": []}]}`, []sdk.Diagnostic{{Summary: "Empty event list", AttributePath: []string{"rule", "0", "events"}}}},
		{"argument without name", `{"rule": [{"decision": "deny", "argument": [{"name": "", "regex": "x"}]}]}`,
			[]sdk.Diagnostic{{Summary: "Missing argument name", AttributePath: []string{"rule", "0", "argument", "0", "name"}}}},
		{"argument without test", `{"rule": [{"decision": "deny", "argument": [{"name": "p"}]}]}`,
			[]sdk.Diagnostic{{Summary: "Argument block needs exactly one test", AttributePath: []string{"rule", "0", "argument", "0"}}}},
		{"argument with two tests", `{"rule": [{"decision": "deny", "argument": [{"name": "p", "regex": "x", "outside_dir": "/w"}]}]}`,
			[]sdk.Diagnostic{{Summary: "Argument block needs exactly one test", AttributePath: []string{"rule", "0", "argument", "0"}}}},
		{"bad host", `{"rule": [{"decision": "deny", "argument": [{"name": "u", "host_not_in": ["ok.com", "https://x.com"]}]}]}`,
			[]sdk.Diagnostic{{Summary: "Invalid host", AttributePath: []string{"rule", "0", "argument", "0", "host_not_in"}}}},
		{"empty outside_dir", `{"rule": [{"decision": "deny", "argument": [{"name": "p", "outside_dir": ""}]}]}`,
			[]sdk.Diagnostic{{Summary: "Empty directory", AttributePath: []string{"rule", "0", "argument", "0", "outside_dir"}}}},
		{"several errors at once", `{"default": "x", "rule": [{"tool": "[", "decision": "y"}]}`, []sdk.Diagnostic{
			{Summary: "Unknown decision", AttributePath: []string{"default"}},
			{Summary: "Unknown decision", AttributePath: []string{"rule", "0", "decision"}},
			{Summary: "Invalid glob", AttributePath: []string{"rule", "0", "tool"}},
		}},
		{"wrong JSON shape", `{"rule": {"tool": "a"}}`, []sdk.Diagnostic{{Summary: "Invalid plugin configuration"}}},
		{"unknown key", `{"rules": []}`, []sdk.Diagnostic{{Summary: "Invalid plugin configuration"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := plugintest.Hook(t, policy.New(nil))
			diags, err := c.Configure(t.Context(), json.RawMessage(tt.cfg))
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range diags {
				if d.Severity != sdk.SeverityError || d.Detail == "" {
					t.Errorf("diagnostic %v: want an error with a detail saying how to fix it", d)
				}
			}
			if diff := cmp.Diff(tt.want, diags, cmp.FilterPath(func(p cmp.Path) bool {
				return p.Last().String() == ".Detail"
			}, cmp.Ignore())); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
			// A refused configuration leaves the plugin unconfigured.
			if _, err := c.PermissionRequest(t.Context(), call("s", "t", `{}`, "/", nil)); !errors.Is(err, sdk.ErrNotConfigured) {
				t.Errorf("after a refused first configuration: err = %v, want ErrNotConfigured", err)
			}
		})
	}
}

func TestRefusedConfigurationKeepsRules(t *testing.T) {
	c := configured(t, `{"rule": [{"tool": "rm", "decision": "deny"}]}`)
	diags, err := c.Configure(t.Context(), json.RawMessage(`{"rule": [{"tool": "rm", "decision": "nope"}]}`))
	if err != nil || !sdk.HasErrors(diags) {
		t.Fatalf("Configure = %v, %v; want error diagnostics", diags, err)
	}
	if got := decide(t, c, call("s", "rm", `{}`, "/", nil)); got.Permission != hook.DecisionDeny {
		t.Errorf("the previous rules must stay in force, got %+v", got)
	}
}

func TestEmptyConfigAsksForEverything(t *testing.T) {
	c := configured(t, `{}`)
	if diff := cmp.Diff(asked, decide(t, c, call("s", "t", `{}`, "/", nil))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestInfo(t *testing.T) {
	info, err := plugintest.Hook(t, policy.New(nil)).Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"pre_tool_use", "permission_request", "pre_resource_read", "pre_prompt_get", sdk.CapabilityConfigure} {
		if !info.Has(c) {
			t.Errorf("Info.Capabilities = %v, missing %q", info.Capabilities, c)
		}
	}
	if info.Has("post_tool_use") {
		t.Errorf("the policy must not be called for post_tool_use")
	}
	if info.ConfigSchema == nil || len(info.ConfigSchema.Blocks) != 3 || info.ConfigSchema.Blocks[0].TypeName != "rule" ||
		info.ConfigSchema.Blocks[1].TypeName != "resource" || info.ConfigSchema.Blocks[2].TypeName != "prompt" {
		t.Errorf("ConfigSchema = %+v, want rule, resource and prompt blocks", info.ConfigSchema)
	}
}

// TestBinary runs the built plugin as the host would and checks a
// destructive call is denied while a read is left to the reviewer.
func TestBinary(t *testing.T) {
	c := plugintest.RunBinary(t, testbin.Path(t, binaryName), sdk.KindHook).(*hook.Client)
	info, err := c.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.Kind != sdk.KindHook || info.ConfigSchema == nil {
		t.Fatalf("Info = %+v", info)
	}
	diags, err := c.Configure(t.Context(), json.RawMessage(`{"rule": [{"name": "bad", "tool": "x", "decision": "deny", "argument": [{"name": "q", "regex": "("}]}]}`))
	if err != nil || len(diags) != 1 || strings.Join(diags[0].AttributePath, ".") != "rule.0.argument.0.regex" {
		t.Fatalf("Configure of a bad regex = %v, %v; want one diagnostic at rule.0.argument.0.regex", diags, err)
	}
	diags, err = c.Configure(t.Context(), json.RawMessage(`{"rule": [{"annotations": {"destructive": true}, "decision": "deny", "message": "no destructive tools"}]}`))
	if err != nil || len(diags) != 0 {
		t.Fatalf("Configure = %v, %v", diags, err)
	}
	if got := decide(t, c, call("files", "delete_file", `{"path":"a"}`, "/", &sdk.Annotations{Destructive: ptr(true)})); got != denied("no destructive tools") {
		t.Errorf("destructive call: %+v", got)
	}
	if got := decide(t, c, call("files", "read_file", `{"path":"a"}`, "/", &sdk.Annotations{ReadOnly: true})); got != asked {
		t.Errorf("read-only call: %+v", got)
	}
}

func BenchmarkPermissionRequest(b *testing.B) {
	c := configured(b, `{"rule": [
	  {"tool": "delete_*", "decision": "deny"},
	  {"server": "web", "argument": [{"name": "url", "host_not_in": ["example.com"]}], "decision": "deny"},
	  {"argument": [{"name": "path", "outside_dir": "/work"}], "decision": "deny"},
	  {"annotations": {"read_only": true}, "decision": "allow"}
	]}`)
	req := call("files", "read_file", `{"path":"/work/src/main.go"}`, "/work", &sdk.Annotations{ReadOnly: true})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := c.PermissionRequest(ctx, req)
		if err != nil || res.Decision != hook.DecisionAllow {
			b.Fatalf("PermissionRequest = %+v, %v", res, err)
		}
	}
}
