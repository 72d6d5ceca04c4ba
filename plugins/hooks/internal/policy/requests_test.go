package policy_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/plugins/hooks/internal/policy"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/hook"
	"github.com/toolgate/toolgate/sdk/plugintest"
)

// TestResourceAndPromptRules: resource and prompt blocks decide by glob,
// server and caller, a deny winning over an allow; an allow exempts the
// request from the caller rules; caller-only rules apply to every kind;
// tool rules and the default do not.
func TestResourceAndPromptRules(t *testing.T) {
	c := configured(t, `{
	  "default": "deny",
	  "rule": [
	    {"tool": "*", "decision": "deny", "message": "tool rule"},
	    {"caller": {"subject": ["ci-*"]}, "decision": "deny", "message": "bots read nothing"},
	    {"caller": {"subject": ["eve"]}, "events": ["pre_tool_use"], "decision": "deny", "message": "eve: tools only"}
	  ],
	  "resource": {
	    "file:///etc/**": {"decision": "deny", "message": "no /etc"},
	    "file:///**": {"decision": "allow"},
	    "file:///public/**": {"decision": "allow"},
	    "file:///secret/*": {"server": "vault*", "decision": "deny", "caller": {"groups": ["ops"]}, "message": "ops may not read vault secrets"}
	  },
	  "prompt": {
	    "admin_*": {"decision": "deny", "message": "no admin prompts"}
	  }
	}`)
	// The host asks Info first; the client asks only about the request
	// events Info lists.
	if _, err := c.Info(t.Context()); err != nil {
		t.Fatal(err)
	}
	alice := &sdk.Caller{Subject: "alice", Groups: []string{"ops"}}
	bot := &sdk.Caller{Subject: "ci-nightly"}
	read := func(server, uri string, caller *sdk.Caller) string {
		res, err := c.PreResourceRead(t.Context(), hook.ResourceRequest{Server: server, URI: uri, Caller: caller})
		if err != nil {
			t.Fatal(err)
		}
		if res.Action == hook.ActionBlock {
			return res.Reason
		}
		return "continue"
	}
	get := func(name string, caller *sdk.Caller) string {
		res, err := c.PrePromptGet(t.Context(), hook.PromptRequest{Server: "s", Prompt: name, Caller: caller})
		if err != nil {
			t.Fatal(err)
		}
		if res.Action == hook.ActionBlock {
			return res.Reason
		}
		return "continue"
	}
	for _, tt := range []struct{ name, got, want string }{
		{"a deny wins over a matching allow", read("files", "file:///etc/passwd", alice), "no /etc"},
		{"an allow lets the read go on", read("files", "file:///home/a", nil), "continue"},
		{"an allow exempts from the caller rules", read("files", "file:///public/x", bot), "continue"},
		{"caller rules apply to reads", read("files", "demo://x", bot), "bots read nothing"},
		{"tool rules and the default do not", read("files", "demo://x", alice), "continue"},
		{"server and caller of a resource block", read("vault1", "file:///secret/k", alice), "ops may not read vault secrets"},
		{"another server", read("files", "file:///secret/k", alice), "continue"},
		{"events limit caller rules", read("files", "demo://x", &sdk.Caller{Subject: "eve"}), "continue"},
		{"a prompt block denies", get("admin_reset", alice), "no admin prompts"},
		{"caller rules apply to prompts", get("greet", bot), "bots read nothing"},
		{"other prompts go on", get("greet", alice), "continue"},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestRequestBlockDiagnostics(t *testing.T) {
	c := plugintest.Hook(t, policy.New(nil))
	diags, err := c.Configure(t.Context(), json.RawMessage(`{
	  "resource": {"[x": {"decision": "deny"}, "a://*": {"decision": "ask"}},
	  "prompt": {"p": {"decision": "deny", "server": "[y"}}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, d := range diags {
		texts = append(texts, strings.Join(d.AttributePath, ".")+": "+d.Summary+": "+d.Detail)
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{`resource "[x" is not a valid glob`, `resource.a://*.decision: Unknown decision`, `prompt.p.server: Invalid glob`} {
		if !strings.Contains(all, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, all)
		}
	}
}
