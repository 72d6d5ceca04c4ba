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

func TestCallerConditions(t *testing.T) {
	c := configured(t, `{
	  "default": "deny",
	  "default_message": "not for you",
	  "rule": [
	    {"caller": {"subject": ["ci-*"]}, "tool": "delete_*", "decision": "deny", "message": "bots do not delete"},
	    {"caller": {"groups": ["admins", "ops-*"]}, "decision": "allow"},
	    {"caller": {"email": ["*@example.com"], "client_id": ["ide"]}, "tool": "read_*", "decision": "allow"}
	  ]
	}`)
	writer := &sdk.Annotations{Destructive: ptr(false), OpenWorld: ptr(false)}
	as := func(tool string, caller *sdk.Caller) hook.Request {
		r := call("files", tool, `{}`, t.TempDir(), writer)
		r.Caller = caller
		return r
	}
	for _, tt := range []struct {
		name string
		req  hook.Request
		want outcome
	}{
		{"a group glob allows", as("write_file", &sdk.Caller{Subject: "alice", Groups: []string{"dev", "ops-eu"}}), allowed},
		{"no matching group falls to the default", as("write_file", &sdk.Caller{Subject: "bob", Groups: []string{"dev"}}), denied("not for you")},
		{"subject glob with a tool", as("delete_file", &sdk.Caller{Subject: "ci-nightly", Groups: []string{"admins"}}), denied("bots do not delete")},
		{"every attribute must match", as("read_file", &sdk.Caller{Subject: "carol", Email: "carol@example.com", ClientID: "cli"}), denied("not for you")},
		{"email and client id", as("read_file", &sdk.Caller{Subject: "carol", Email: "carol@example.com", ClientID: "ide"}), allowed},
		{"an unknown caller matches no caller rule", as("write_file", nil), denied("not for you")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := decide(t, c, tt.req)
			if got.Permission != tt.want.Permission || got.Pre != tt.want.Pre ||
				(tt.want.Permission == hook.DecisionDeny && got.PermMsg != tt.want.PermMsg) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCallerBlockDiagnostics(t *testing.T) {
	c := plugintest.Hook(t, policy.New(nil))
	diags, err := c.Configure(t.Context(), json.RawMessage(`{"rule": [
	  {"caller": {}, "decision": "deny"},
	  {"caller": {"groups": ["[x"]}, "decision": "deny"}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, d := range diags {
		texts = append(texts, d.Summary+": "+d.Detail)
	}
	all := strings.Join(texts, "\n")
	if !strings.Contains(all, "Empty caller block") || !strings.Contains(all, `groups = "[x" is not a valid glob`) {
		t.Errorf("diagnostics:\n%s", all)
	}
}
