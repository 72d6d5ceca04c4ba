package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/gateway"
)

// answerer is an upstream user answering elicitations from a script.
type answerer struct {
	mu      sync.Mutex
	answers []*mcp.ElicitResult
	asked   []*mcp.ElicitParams
}

func (a *answerer) handler(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, req.Params)
	if len(a.answers) == 0 {
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	r := a.answers[0]
	a.answers = a.answers[1:]
	return r, nil
}

func (a *answerer) prompts() []*mcp.ElicitParams {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.asked)
}

func decide(v string) *mcp.ElicitResult {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": v}}
}

// slow_write has no annotations, so mode auto requires approval and
// offers every choice.
const gated = "mcp__demo__slow_write"

func TestApprovalIsAskedOfTheUpstreamClient(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			for _, tt := range []struct {
				name    string
				answers []*mcp.ElicitResult
				calls   int      // calls made
				asked   int      // approval forms shown
				reached int      // calls the server received
				denial  string   // text of denied calls
				errors  []bool   // isError per call
				values  []string // decision values offered
			}{
				{name: "allow", answers: []*mcp.ElicitResult{decide("allow"), decide("allow")}, calls: 2, asked: 2, reached: 2, errors: []bool{false, false}},
				{name: "allow for this session", answers: []*mcp.ElicitResult{decide("allow_session")}, calls: 2, asked: 1, reached: 2, errors: []bool{false, false}},
				{name: "decline", answers: []*mcp.ElicitResult{{Action: "decline"}}, calls: 1, asked: 1, reached: 0, denial: "user rejected MCP tool call", errors: []bool{true}},
				{name: "cancel the form", answers: []*mcp.ElicitResult{{Action: "cancel"}}, calls: 1, asked: 1, reached: 0, denial: "user cancelled MCP tool call", errors: []bool{true}},
				{name: "choose cancel", answers: []*mcp.ElicitResult{decide("cancel")}, calls: 1, asked: 1, reached: 0, denial: "user cancelled MCP tool call", errors: []bool{true}},
			} {
				t.Run(tt.name, func(t *testing.T) {
					f := newFixture(t, persistentApproval)
					a := &answerer{answers: tt.answers}
					cs := p.connect(f, t, &mcp.ClientOptions{ElicitationHandler: a.handler})
					if got := cs.InitializeResult().ProtocolVersion; got != p.version {
						t.Fatalf("negotiated %s, want %s", got, p.version)
					}
					var isError []bool
					for range tt.calls {
						res := call(t, cs, gated, map[string]any{"ms": 1})
						isError = append(isError, res.IsError)
						if res.IsError && text(res) != tt.denial {
							t.Errorf("denial text = %q, want %q", text(res), tt.denial)
						}
					}
					if diff := cmp.Diff(tt.errors, isError); diff != "" {
						t.Errorf("isError per call (-want +got):\n%s", diff)
					}
					prompts := a.prompts()
					if len(prompts) != tt.asked {
						t.Fatalf("asked %d times, want %d", len(prompts), tt.asked)
					}
					if got := len(serverCalls(t, f.calls)); got != tt.reached {
						t.Errorf("server received %d calls, want %d (%v)", got, tt.reached, serverCalls(t, f.calls))
					}
					checkApprovalForm(t, prompts[0])
				})
			}
		})
	}
}

// checkApprovalForm checks what a user sees: the server, the tool, its
// arguments and annotations, and the four choices.
func checkApprovalForm(t *testing.T, p *mcp.ElicitParams) {
	t.Helper()
	for _, want := range []string{
		`Allow the demo MCP server to run tool "slow_write"?`,
		"Server: demo", "Tool: slow_write (called as mcp__demo__slow_write)",
		`"ms": 1`, "Annotations: none declared",
	} {
		if !strings.Contains(p.Message, want) {
			t.Errorf("form message lacks %q:\n%s", want, p.Message)
		}
	}
	schema, _ := p.RequestedSchema.(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	decision, _ := props["decision"].(map[string]any)
	want := map[string]any{
		"enum":      []any{"allow", "allow_session", "allow_always", "cancel"},
		"enumNames": []any{"Allow", "Allow for this session", "Allow and don't ask me again", "Cancel"},
	}
	got := map[string]any{"enum": decision["enum"], "enumNames": decision["enumNames"]}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("choices (-want +got):\n%s", diff)
	}
	meta, _ := p.Meta[gateway.MetaKeyApproval].(map[string]any)
	if meta["server"] != "demo" || meta["tool"] != "slow_write" {
		t.Errorf("approval _meta = %v", meta)
	}
}

// persistentApproval lets the upstream client answer "Allow and don't ask
// me again", which toolgate serve offers only when the operator allows it.
const persistentApproval = "serve {\n  allow_persistent_approval = true\n}"

func TestAllowAlwaysIsWrittenToTheConfigAndSpansSessions(t *testing.T) {
	f := newFixture(t, persistentApproval)
	a := &answerer{answers: []*mcp.ElicitResult{decide("allow_always")}}
	first := f.connectHTTP(t, &mcp.ClientOptions{ElicitationHandler: a.handler})
	if res := call(t, first, gated, map[string]any{"ms": 1}); res.IsError {
		t.Fatalf("first call: %s", text(res))
	}
	src, err := os.ReadFile(f.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), `tool "slow_write"`) || !strings.Contains(string(src), `approval_mode = "remembered"`) {
		t.Errorf("config was not updated:\n%s", src)
	}
	second := f.connectStdio(t, &mcp.ClientOptions{ElicitationHandler: a.handler})
	if res := call(t, second, gated, map[string]any{"ms": 1}); res.IsError {
		t.Fatalf("second session: %s", text(res))
	}
	if n := len(a.prompts()); n != 1 {
		t.Errorf("asked %d times; the second session should not be asked", n)
	}
}

func TestSessionApprovalIsPerUpstreamSession(t *testing.T) {
	f := newFixture(t, "")
	a := &answerer{answers: []*mcp.ElicitResult{decide("allow_session"), {Action: "decline"}}}
	one := f.connectHTTP(t, &mcp.ClientOptions{ElicitationHandler: a.handler})
	two := f.connectHTTP(t, &mcp.ClientOptions{ElicitationHandler: a.handler})
	if res := call(t, one, gated, map[string]any{"ms": 1}); res.IsError {
		t.Fatalf("session one: %s", text(res))
	}
	if res := call(t, two, gated, map[string]any{"ms": 1}); !res.IsError || text(res) != "user rejected MCP tool call" {
		t.Fatalf("session two was not asked itself: %v %q", res.IsError, text(res))
	}
	if n := len(a.prompts()); n != 2 {
		t.Errorf("asked %d times, want 2 (one per session)", n)
	}
}

func TestClientWithoutElicitationGetsADenialThatSaysHowToApprove(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			f := newFixture(t, "")
			cs := p.connect(f, t, nil)
			res := call(t, cs, gated, map[string]any{"ms": 1})
			if !res.IsError {
				t.Fatalf("the call ran without approval: %s", text(res))
			}
			for _, want := range []string{"does not support elicitation", "an inbox {} block", "/approvals", "permission hook", `reviewer = "guardian"`, `approval_mode = "approve"`} {
				if !strings.Contains(text(res), want) {
					t.Errorf("denial lacks %q: %s", want, text(res))
				}
			}
			// Advice for a terminal does not fit a gateway's user.
			if strings.Contains(text(res), "interactive terminal") {
				t.Errorf("the serve denial tells the user to use a terminal: %s", text(res))
			}
			if got := serverCalls(t, f.calls); len(got) != 0 {
				t.Errorf("the server was contacted: %v", got)
			}
		})
	}
}

// TestAClientOfferingANewerVersionIsAskedTheHandshakeWay: the initialize
// handshake negotiates at most 2025-11-25, so a client that offered
// 2026-07-28 there is asked with elicitation/create in the call, never
// sent an input-required result.
func TestAClientOfferingANewerVersionIsAskedTheHandshakeWay(t *testing.T) {
	f := newFixture(t, "")
	url := f.httpServer(t, config.Serve{}, nil).URL + gateway.Path
	resp, body := send(t, url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2026-07-28",`+
		`"capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"curl","version":"1"}}}`, nil)
	if !strings.Contains(body, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize answered %s", body)
	}
	session := map[string]string{"Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id"), "Mcp-Protocol-Version": "2025-11-25"}
	send(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel() // abandons the call once its first message is read
	call := postMessage(t, ctx, url,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+gated+`","arguments":{"ms":1}}}`, session)
	defer call.Body.Close()
	sc := bufio.NewScanner(call.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var msg struct {
			Method string `json:"method"`
		}
		if err := json.Unmarshal([]byte(data), &msg); err != nil || msg.Method != "elicitation/create" {
			t.Errorf("the first message of the call is not an elicitation/create request: %s", data)
		}
		return
	}
	t.Fatalf("the call's stream ended without a message: %v", sc.Err())
}
