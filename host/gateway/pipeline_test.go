package gateway_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/tokenauth/tokenauthtest"
	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testbin"
)

// TestEveryKindThroughEveryDoor is issue 27's acceptance table: every
// kind of request through every door that offers it — the CLI
// (toolgate call, toolgate read), the model's built-in tools (toolgate
// call of a host tool, as a model calls them), the gateway over stdio and
// the gateway over Streamable HTTP with a caller's token — with real
// binaries (toolgate, mcp-demo, the policy hook). Each request is
// audited with exactly one begin and one end record naming its kind, its
// caller (alice over HTTP, none elsewhere) and its client (the upstream
// client's name, or the toolgate command); the second request meets a
// rate limit and is refused with the retry text; a policy rule denies
// every kind that reaches a server, with the rule's message; and a refused
// request never reaches the server (mcp-demo's own --call-log says what
// it received).
//
// A door that does not offer a kind is skipped as N/A: the request's
// field for it is nil, and a comment at the kind says why.
func TestEveryKindThroughEveryDoor(t *testing.T) {
	iss := tokenauthtest.New(t)
	dir := t.TempDir()
	// vault is the server whose every request the policy denies.
	demoLog, vaultLog := filepath.Join(dir, "demo.jsonl"), filepath.Join(dir, "vault.jsonl")
	const (
		toolRule   = "vault's tools are off limits"
		docRule    = "doc 3 is off limits"
		promptRule = "vault's prompts are off limits"
	)
	limit := func(name string) string {
		return fmt.Sprintf("  limit {\n    tools  = [%q]\n    calls  = 1\n    period = 3600\n  }\n", name)
	}
	// Tools are deferred so that tool_search is served; echo stays direct.
	top := fmt.Sprintf(`
exposure {
  mode        = "deferred"
  never_defer = ["mcp__*__echo"]
}
plugin "policy" {
  kind = "hook"
  path = %q
  config {
    rule {
      server   = "vault"
      decision = "deny"
      message  = %q
    }
    resource "demo://doc/00003" {
      decision = "deny"
      message  = %q
    }
    prompt "*" {
      server   = "vault"
      decision = "deny"
      message  = %q
    }
  }
}
serve {
  auth {
    issuer   = %q
    resource = %q
  }
%s}`, testbin.Path(t, "plugins/toolgate-hook-policy"), toolRule, docRule, promptRule, iss.URL, testResource,
		limit("mcp__demo__echo")+limit("tool_search")+limit("**doc/00001")+limit("**doc/00002")+limit("mcp__demo__greet")+limit("**item/*"))
	servers := []string{
		demoServer(t, "demo", demoLog, "", "--resources", "3"),
		// vault's resources are left out, so that demo's URIs are served
		// as they are, not rewritten as a conflict.
		demoServer(t, "vault", vaultLog, `disabled_resources = ["**"]`, "--resources", "1"),
	}
	rec := &events.Recorder{}
	f := newFixtureWith(t, fixtureOptions{sinks: []events.Sink{rec}}, top, servers...)
	srv := f.httpServer(t, f.h.Config().Serve, nil)
	alice := connectAs(t, srv.URL, iss.Token(t, "k1", tokenauthtest.Claims{Subject: "alice", Audience: []string{testResource}}))
	stdio := f.connectStdio(t, nil)
	// A 2026-07-28 client subscribes through its listen stream, whose
	// refusals never reach Subscribe's caller; stdio clients of today's
	// hosts initialize at 2025-11-25 or older and send resources/subscribe.
	stdioLegacy := f.connectStdioWith(t, nil, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	// The CLI is toolgate, a process of its own, on the same configuration
	// in a directory of its own (so an audit log of its own).
	cli := &fixture{dir: t.TempDir()}
	cli.cfgPath = filepath.Join(cli.dir, "toolgate.hcl")
	cli.configure(t, top, servers...)

	callTool := func(name, args string) func(*mcp.ClientSession) error {
		return func(cs *mcp.ClientSession) error {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
			if err == nil && res.IsError {
				err = fmt.Errorf("%s", text(res))
			}
			return err
		}
	}
	read := func(uri string) func(*mcp.ClientSession) error {
		return func(cs *mcp.ClientSession) error {
			_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
			return err
		}
	}
	prompt := func(name string) func(*mcp.ClientSession) error {
		return func(cs *mcp.ClientSession) error {
			_, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: name, Arguments: map[string]string{"name": "Ada"}})
			return err
		}
	}
	subscribe := func(uri string) func(*mcp.ClientSession) error {
		return func(cs *mcp.ClientSession) error {
			err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri})
			if err == nil {
				// The next subscribe of this session is a new one again.
				err = cs.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: uri})
			}
			return err
		}
	}
	complete := func(ref *mcp.CompleteReference, arg string) func(*mcp.ClientSession) error {
		return func(cs *mcp.ClientSession) error {
			_, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: "A"}})
			return err
		}
	}

	// request is one request of a kind, as each door sends it; nil for a
	// door that does not offer the kind.
	type request struct {
		gw      func(*mcp.ClientSession) error
		cli     []string // toolgate's arguments (toolgate call, toolgate read)
		builtin []string // toolgate call of a host tool
		log     string   // the call log of the server it is for; "" = no server is asked
		line    string   // what that server logs when it receives it
	}
	// The kinds that a client sends towards a server. Forwarded sampling
	// and elicitation go the other way (a server asks the upstream client
	// within a call) and come in by none of these doors; pipeline's
	// TestForwardedRequests and this package's sampling tests cover them.
	kinds := []struct {
		name  string
		allow request // admitted and approved; the door's second one is over its limit
		// deny is refused by a policy rule with its message, decided by
		// step; zero for built-ins, which no hook event covers.
		deny       request
		rule, step string
	}{
		{name: "tool_call",
			allow: request{gw: callTool("mcp__demo__echo", `{"text":"hi"}`), cli: []string{"call", "mcp__demo__echo", `{"text":"hi"}`},
				log: demoLog, line: "call echo"},
			deny: request{gw: callTool("mcp__vault__echo", `{"text":"hi"}`), cli: []string{"call", "mcp__vault__echo", `{"text":"hi"}`},
				log: vaultLog, line: "call echo"},
			rule: toolRule, step: "pre_tool_use"},
		// The host's own tools ask no server. tool_search is served by
		// the gateway (exposure defers tools); the resource list tools
		// only to a model (the gateway's clients have resources/list of
		// their own). No hook event is about them, so no policy rule
		// decides them; a limit does.
		{name: "builtin",
			allow: request{gw: callTool("tool_search", `{"query":"add two numbers"}`), builtin: []string{"call", "list_mcp_resources", `{}`}}},
		{name: "resource_read",
			allow: request{gw: read("demo://doc/00001"), cli: []string{"read", "demo", "demo://doc/00001"},
				builtin: []string{"call", "read_mcp_resource", `{"server":"demo","uri":"demo://doc/00001"}`},
				log:     demoLog, line: "request resources/read demo://doc/00001"},
			deny: request{gw: read("demo://doc/00003"), cli: []string{"read", "demo", "demo://doc/00003"},
				builtin: []string{"call", "read_mcp_resource", `{"server":"demo","uri":"demo://doc/00003"}`},
				log:     demoLog, line: "request resources/read demo://doc/00003"},
			rule: docRule, step: "pre_resource_read"},
		// Only the gateway's clients subscribe, prompt and complete: no
		// CLI command nor host tool sends these (toolgate prompts lists
		// the catalog). A subscribe is decided as a read of its URI.
		{name: "resource_subscribe",
			allow: request{gw: subscribe("demo://doc/00002"), log: demoLog, line: "request resources/subscribe demo://doc/00002"},
			deny:  request{gw: subscribe("demo://doc/00003"), log: demoLog, line: "request resources/subscribe demo://doc/00003"},
			rule:  docRule, step: "pre_resource_read"},
		{name: "prompt_get",
			allow: request{gw: prompt("mcp__demo__greet"), log: demoLog, line: "request prompts/get greet"},
			deny:  request{gw: prompt("mcp__vault__greet"), log: vaultLog, line: "request prompts/get greet"},
			rule:  promptRule, step: "pre_prompt_get"},
		// A completion is decided as a get of its prompt (or a read of its
		// resource template).
		{name: "completion",
			allow: request{gw: complete(&mcp.CompleteReference{Type: "ref/resource", URI: "demo://item/{id}"}, "id"),
				log: demoLog, line: "request completion/complete demo://item/{id}"},
			deny: request{gw: complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "mcp__vault__greet"}, "name"),
				log: vaultLog, line: "request completion/complete greet"},
			rule: promptRule, step: "pre_prompt_get"},
	}

	// The gateway's doors are in this process: their records are the
	// recorder's, in once the request's tool_call_end is.
	gatewayDoor := func(session func(kind string) *mcp.ClientSession) func(string, request) (bool, error) {
		return func(kind string, r request) (bool, error) {
			if r.gw == nil {
				return false, nil
			}
			return true, r.gw(session(kind))
		}
	}
	inProcess := func(t *testing.T, kind string, seen int) { waitEnd(t, rec, kind, seen) }
	// The CLI's records are its audit log's, complete once it exited.
	cliDoor := func(args func(request) []string) func(string, request) (bool, error) {
		return func(_ string, r request) (bool, error) {
			a := args(r)
			if a == nil {
				return false, nil
			}
			cmd := procwatch.DieWithTest(exec.CommandContext(t.Context(), testbin.Path(t, "toolgate"), append([]string{"--config", cli.cfgPath}, a...)...))
			if out, err := cmd.CombinedOutput(); err != nil {
				return true, fmt.Errorf("toolgate %s: %w: %s", strings.Join(a, " "), err, out)
			}
			return true, nil
		}
	}
	cliRecords := func(t *testing.T) []events.Event {
		data, err := os.ReadFile(filepath.Join(cli.dir, "audit.jsonl"))
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		var out []events.Event
		for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			var head struct{ Event string }
			if err := json.Unmarshal(line, &head); err != nil {
				t.Fatalf("audit line %s: %v", line, err)
			}
			var e events.Event
			switch head.Event {
			case "tool_call_begin":
				var b events.ToolCallBegin
				err, e = json.Unmarshal(line, &b), b
			case "tool_call_end":
				var end events.ToolCallEnd
				err, e = json.Unmarshal(line, &end), end
			default:
				continue
			}
			if err != nil {
				t.Fatalf("audit line %s: %v", line, err)
			}
			out = append(out, e)
		}
		return out
	}
	doors := []struct {
		name   string
		caller string                 // every record's caller
		client func(r request) string // every record's client
		// limited: a second request meets the limit. Limits are buckets
		// per toolgate process and every CLI command is a process of its
		// own, whose one request always finds its bucket full.
		limited bool
		send    func(kind string, r request) (offered bool, err error)
		wait    func(t *testing.T, kind string, seen int)
		records func(t *testing.T) []events.Event
	}{
		{"cli", "", func(r request) string { return "toolgate " + r.cli[0] }, false,
			cliDoor(func(r request) []string { return r.cli }), func(*testing.T, string, int) {}, cliRecords},
		{"builtin", "", func(request) string { return "toolgate call" }, false,
			cliDoor(func(r request) []string { return r.builtin }), func(*testing.T, string, int) {}, cliRecords},
		{"stdio", "", func(request) string { return "test-client" }, true,
			gatewayDoor(func(kind string) *mcp.ClientSession {
				if kind == "resource_subscribe" {
					return stdioLegacy
				}
				return stdio
			}), inProcess, func(*testing.T) []events.Event { return rec.Events() }},
		{"http+token", "alice", func(request) string { return "test-client" }, true,
			gatewayDoor(func(string) *mcp.ClientSession { return alice }), inProcess, func(*testing.T) []events.Event { return rec.Events() }},
	}

	received := func(r request) int {
		if r.log == "" {
			return 0
		}
		event, what, _ := strings.Cut(r.line, " ")
		n := 0
		for _, l := range callLog(t, r.log, event) {
			if l == what {
				n++
			}
		}
		return n
	}
	type attempt struct {
		name          string
		r             request
		refusal, step string // the text and step of its refusal; "" = it goes through
	}
	for _, d := range doors {
		for _, k := range kinds {
			attempts := []attempt{{"allowed", k.allow, "", ""}}
			if d.limited {
				attempts = append(attempts, attempt{"over the limit", k.allow, "Retry in", string(approval.StepRateLimit)})
			}
			if k.rule != "" {
				attempts = append(attempts, attempt{"denied by policy", k.deny, k.rule, k.step})
			}
			t.Run(d.name+"/"+k.name, func(t *testing.T) {
				for _, a := range attempts {
					before, seen := received(a.r), len(d.records(t))
					offered, err := d.send(k.name, a.r)
					if !offered {
						if a.name == "allowed" {
							t.Skipf("N/A: no %s request goes by the %s door (the comment at the kind says why)", k.name, d.name)
						}
						t.Fatalf("%s: the door offers the kind but not this request", a.name)
					}
					d.wait(t, k.name, seen)
					var begins, ends int
					var end events.ToolCallEnd
					for _, e := range d.records(t)[seen:] {
						var c events.Call
						switch e := e.(type) {
						case events.ToolCallBegin:
							c = e.Call
							begins++
						case events.ToolCallEnd:
							c, end = e.Call, e
							ends++
						default:
							continue
						}
						if want := d.client(a.r); c.Kind != k.name || c.Caller.Name() != d.caller || c.Client == nil || c.Client.Name != want {
							t.Errorf("%s: record %+v lacks kind %s, caller %q or client %q", a.name, c, k.name, d.caller, want)
						}
					}
					if begins != 1 || ends != 1 {
						t.Errorf("%s: %d begin and %d end records, want one each", a.name, begins, ends)
					}
					after := received(a.r)
					if a.refusal == "" {
						if err != nil || end.Decision != events.VerdictApproved || (a.r.log != "" && after != before+1) {
							t.Errorf("%s: err %v, the server received it %d times, end %+v", a.name, err, after-before, end)
						}
						continue
					}
					if err == nil || !strings.Contains(err.Error(), a.refusal) || !strings.Contains(end.Error, a.refusal) {
						t.Errorf("%s: err %v, end error %q; want %q", a.name, err, end.Error, a.refusal)
					}
					if after != before || end.Decision != events.VerdictDenied || end.DecisionStep != a.step {
						t.Errorf("%s: the server received the refused request (%d), or end %+v is not denied by %s", a.name, after-before, end, a.step)
					}
				}
			})
		}
	}
}
