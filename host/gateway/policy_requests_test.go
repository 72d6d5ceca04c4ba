package gateway_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/tokenauth/tokenauthtest"
	"github.com/toolgate/toolgate/internal/testbin"
)

// TestPolicyDecidesReadsAndPromptsThroughTheGateway is issue 27 item 3
// over both gateway doors: the real policy hook's resource and prompt
// blocks, and its caller rules, deny a resources/read and a prompts/get
// with the rule's message, audited with the deciding step, and the
// server never receives them (mcp-demo's own log). A hook that does not
// declare the request events (hook-deny, which would deny anything it
// is asked and answers Unimplemented for them, as a plugin older than
// the events) is never asked: the reads it would deny go through.
func TestPolicyDecidesReadsAndPromptsThroughTheGateway(t *testing.T) {
	iss := tokenauthtest.New(t)
	rec := &events.Recorder{}
	calls := filepath.Join(t.TempDir(), "calls.jsonl")
	f := newFixtureWith(t, fixtureOptions{sinks: []events.Sink{rec}}, fmt.Sprintf(`
plugin "policy" {
  kind = "hook"
  path = %q
  config {
    rule {
      caller { subject = ["mallory"] }
      decision = "deny"
      message  = "mallory may read nothing"
    }
    resource "demo://doc/00001" {
      decision = "deny"
      message  = "doc 1 is off limits"
    }
    prompt "gree*" {
      decision = "deny"
      message  = "no greetings today"
    }
  }
}
plugin "old" {
  kind     = "hook"
  path     = %q
  on_error = "deny"
}
serve {
  auth {
    issuer   = %q
    resource = %q
  }
}`, testbin.Path(t, "plugins/toolgate-hook-policy"), testbin.Path(t, "testplugins/hook-deny"), iss.URL, testResource),
		demoServer(t, "demo", calls, "", "--resources", "3"))
	srv := f.httpServer(t, f.h.Config().Serve, nil)
	token := func(sub string) string {
		return iss.Token(t, "k1", tokenauthtest.Claims{Subject: sub, Audience: []string{testResource}})
	}
	read := func(uri string) func(*mcp.ClientSession) error {
		return func(cs *mcp.ClientSession) error {
			_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
			return err
		}
	}
	greet := func(cs *mcp.ClientSession) error {
		_, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "mcp__demo__greet", Arguments: map[string]string{"name": "Ada"}})
		return err
	}
	stdio := f.connectStdio(t, nil)
	alice, mallory := connectAs(t, srv.URL, token("alice")), connectAs(t, srv.URL, token("mallory"))
	for _, tt := range []struct {
		name     string
		cs       *mcp.ClientSession
		kind     string
		received string // what mcp-demo logs when it receives it
		send     func(*mcp.ClientSession) error
		want     string // the denial's text; "" = it goes through
		step     string
	}{
		{"stdio/resource block", stdio, "resource_read", "resources/read demo://doc/00001", read("demo://doc/00001"), "doc 1 is off limits", "pre_resource_read"},
		{"stdio/prompt block", stdio, "prompt_get", "prompts/get greet", greet, "no greetings today", "pre_prompt_get"},
		{"stdio/other reads go on", stdio, "resource_read", "resources/read demo://doc/00002", read("demo://doc/00002"), "", ""},
		{"http/resource block", alice, "resource_read", "resources/read demo://doc/00001", read("demo://doc/00001"), "doc 1 is off limits", "pre_resource_read"},
		{"http/prompt block", alice, "prompt_get", "prompts/get greet", greet, "no greetings today", "pre_prompt_get"},
		{"http/caller rule", mallory, "resource_read", "resources/read demo://doc/00003", read("demo://doc/00003"), "mallory may read nothing", "pre_resource_read"},
		{"http/other callers read", alice, "resource_read", "resources/read demo://doc/00003", read("demo://doc/00003"), "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			count := func() int {
				return len(slices.DeleteFunc(callLog(t, calls, "request"), func(l string) bool { return l != tt.received }))
			}
			before, seen := count(), len(rec.Events())
			err := tt.send(tt.cs)
			end := waitEnd(t, rec, tt.kind, seen)
			after := count()
			if tt.want == "" {
				if err != nil || after != before+1 || end.Decision != events.VerdictApproved {
					t.Errorf("err %v, the server received it %d times, end %+v", err, after-before, end)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || end.Error != tt.want {
				t.Errorf("err %v, end error %q; want the rule's message %q", err, end.Error, tt.want)
			}
			if after != before || end.Decision != events.VerdictDenied || end.DecisionStep != tt.step {
				t.Errorf("the server received the denied request (%d), or end %+v is not denied by %s", after-before, end, tt.step)
			}
		})
	}
}
