package gateway_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/gateway"
	"github.com/toolgate/toolgate/host/tokenauth/tokenauthtest"
	"github.com/toolgate/toolgate/internal/testbin"
)

const testResource = "https://toolgate.test/mcp"

// authFixture is a gateway with serve { auth } trusting a test issuer,
// the real policy hook deciding by caller groups, and a limit of two
// echo calls per caller. The limits read a stopped clock: time passes
// for them only when a test says so.
func authFixture(t *testing.T) (*fixture, *tokenauthtest.Issuer, string) {
	t.Helper()
	iss := tokenauthtest.New(t)
	stopped := time.Date(2026, 12, 2, 7, 0, 0, 0, time.UTC)
	f := newFixtureWith(t, fixtureOptions{limitClock: func() time.Time { return stopped }}, fmt.Sprintf(`
plugin "policy" {
  kind = "hook"
  path = %q
  config {
    default         = "deny"
    default_message = "only admins may call tools"
    rule {
      caller { groups = ["admins"] }
      decision = "allow"
    }
  }
}
serve {
  auth {
    issuer   = %q
    resource = %q
  }
  limit {
    tools  = ["mcp__demo__echo"]
    calls  = 2
    period = 3600
  }
}`, testbin.Path(t, "plugins/toolgate-hook-policy"), iss.URL, testResource))
	srv := f.httpServer(t, f.h.Config().Serve, nil)
	return f, iss, srv.URL
}

// bearer adds a token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// connectAs opens a stateful session (2025-11-25) with a bearer token.
func connectAs(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url + gateway.Path,
		HTTPClient: &http.Client{Transport: bearer{token: token, base: tr}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func postAs(t *testing.T, url, token, session string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url+gateway.Path,
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func TestAuthChallengesAndPublishesResourceMetadata(t *testing.T) {
	_, iss, url := authFixture(t)
	resp := postAs(t, url, "", "")
	ch := resp.Header.Get("WWW-Authenticate")
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(ch, `resource_metadata="https://toolgate.test/.well-known/oauth-protected-resource/mcp"`) {
		t.Fatalf("no token: %s, WWW-Authenticate %q", resp.Status, ch)
	}
	wrongAud := iss.Token(t, "k1", tokenauthtest.Claims{Subject: "alice", Audience: []string{"https://elsewhere.test/mcp"}})
	resp = postAs(t, url, wrongAud, "")
	if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(ch, `error="invalid_token"`) {
		t.Errorf("wrong audience: %s, WWW-Authenticate %q", resp.Status, ch)
	}

	// A client follows resource_metadata to find the issuer.
	mresp, err := http.Get(url + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer mresp.Body.Close()
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	if err := json.NewDecoder(mresp.Body).Decode(&meta); err != nil || mresp.StatusCode != http.StatusOK {
		t.Fatalf("metadata: %s %v", mresp.Status, err)
	}
	if meta.Resource != testResource || len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != iss.URL {
		t.Errorf("metadata = %+v", meta)
	}
}

// auditRecord is what the test reads of an audit line.
type auditRecord struct {
	Event    string          `json:"event"`
	Kind     string          `json:"kind"`
	Decision string          `json:"decision"`
	Result   json.RawMessage `json:"result"`
	Client   *struct {
		Name string `json:"name"`
	} `json:"client"`
	ModelName string `json:"model_name"`
	Step      string `json:"step"`
	Verdict   string `json:"verdict"`
	Status    string `json:"status"`
	Rationale string `json:"rationale"`
	Caller    *struct {
		Subject string   `json:"subject"`
		Groups  []string `json:"groups"`
	} `json:"caller"`
}

func readAudit(t *testing.T, dir string) []auditRecord {
	t.Helper()
	fh, err := os.Open(filepath.Join(dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []auditRecord
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r auditRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func TestCallerIdentityReachesTheHookAndTheAuditLog(t *testing.T) {
	f, iss, url := authFixture(t)
	alice := iss.Token(t, "k1", tokenauthtest.Claims{Subject: "alice", Audience: []string{testResource},
		Extra: map[string]any{"groups": []string{"admins"}}})
	bob := iss.Token(t, "k1", tokenauthtest.Claims{Subject: "bob", Audience: []string{testResource},
		Extra: map[string]any{"groups": []string{"dev"}}})

	// The policy hook allows alice (group admins) and denies bob: it
	// sees who calls.
	a := connectAs(t, url, alice)
	if res := call(t, a, "mcp__demo__echo", map[string]any{"text": "hi"}); res.IsError || text(res) != "hi" {
		t.Fatalf("alice: %q", text(res))
	}
	b := connectAs(t, url, bob)
	if res := call(t, b, "mcp__demo__add", map[string]any{"a": 1, "b": 2}); !res.IsError || text(res) != "only admins may call tools" {
		t.Fatalf("bob: error=%v %q", res.IsError, text(res))
	}

	// Every record of both calls names its caller.
	subjects := map[string]map[string]bool{}
	for _, r := range readAudit(t, f.dir) {
		if r.ModelName == "" {
			continue
		}
		if r.Caller == nil {
			t.Errorf("%s record of %s has no caller", r.Event, r.ModelName)
			continue
		}
		if subjects[r.ModelName] == nil {
			subjects[r.ModelName] = map[string]bool{}
		}
		subjects[r.ModelName][r.Event+"/"+r.Caller.Subject] = true
	}
	for _, want := range []string{"tool_call_begin/alice", "approval_decision/alice", "tool_call_end/alice"} {
		if !subjects["mcp__demo__echo"][want] {
			t.Errorf("echo audit lacks %s: %v", want, subjects["mcp__demo__echo"])
		}
	}
	for _, want := range []string{"tool_call_begin/bob", "approval_decision/bob", "tool_call_end/bob"} {
		if !subjects["mcp__demo__add"][want] {
			t.Errorf("add audit lacks %s: %v", want, subjects["mcp__demo__add"])
		}
	}
}

func TestASessionAnswersOnlyItsCaller(t *testing.T) {
	_, iss, url := authFixture(t)
	alice := iss.Token(t, "k1", tokenauthtest.Claims{Subject: "alice", Audience: []string{testResource}})
	bob := iss.Token(t, "k1", tokenauthtest.Claims{Subject: "bob", Audience: []string{testResource}})
	a := connectAs(t, url, alice)
	if resp := postAs(t, url, alice, a.ID()); resp.StatusCode != http.StatusOK {
		t.Fatalf("alice in her own session: %s", resp.Status)
	}
	if resp := postAs(t, url, bob, a.ID()); resp.StatusCode != http.StatusForbidden {
		t.Errorf("bob with alice's session id: %s, want 403 Forbidden", resp.Status)
	}
}

func TestRateLimitPerCallerAnswersWhenToRetry(t *testing.T) {
	f, iss, url := authFixture(t)
	token := func(sub string) string {
		return iss.Token(t, "k1", tokenauthtest.Claims{Subject: sub, Audience: []string{testResource},
			Extra: map[string]any{"groups": []string{"admins"}}})
	}
	a := connectAs(t, url, token("alice"))
	for i := range 2 {
		if res := call(t, a, "mcp__demo__echo", map[string]any{"text": "x"}); res.IsError {
			t.Fatalf("alice's call %d: %q", i+1, text(res))
		}
	}
	res := call(t, a, "mcp__demo__echo", map[string]any{"text": "x"})
	// Two calls an hour: the next token comes 1800 s after the stopped
	// clock's time, whatever the calls took.
	if !res.IsError || !strings.Contains(text(res), "rate limit") || !strings.Contains(text(res), "Retry in 1800 s (after 2026-12-02T07:30:00Z)") {
		t.Fatalf("alice's third call: error=%v %q", res.IsError, text(res))
	}
	// Another tool, and another caller, have buckets of their own.
	if res := call(t, a, "mcp__demo__add", map[string]any{"a": 1, "b": 2}); res.IsError {
		t.Errorf("alice on another tool: %q", text(res))
	}
	c := connectAs(t, url, token("carol"))
	if res := call(t, c, "mcp__demo__echo", map[string]any{"text": "x"}); res.IsError {
		t.Errorf("carol: %q", text(res))
	}
	if n := len(serverCalls(t, f.calls)); n != 4 {
		t.Errorf("the server got %d calls, want 4 (the limited one never reaches it)", n)
	}
	var limited bool
	for _, r := range readAudit(t, f.dir) {
		if r.Event == "approval_decision" && r.Step == "rate_limit" && r.Verdict == "denied" &&
			r.Caller != nil && r.Caller.Subject == "alice" && strings.Contains(r.Rationale, "Retry in") {
			limited = true
		}
	}
	if !limited {
		t.Error("the audit log has no rate_limit denial for alice")
	}
}

func TestAnAuthBlockAllowsListeningBeyondLoopback(t *testing.T) {
	iss := tokenauthtest.New(t)
	e, err := gateway.NewEndpoint(config.Serve{Auth: &config.Auth{Issuer: iss.URL, Resource: testResource}}, "0.0.0.0:0", nil)
	if err != nil {
		t.Fatalf("NewEndpoint with auth on 0.0.0.0: %v", err)
	}
	if !e.RequiresToken() || e.Loopback {
		t.Errorf("endpoint = %+v, want one that requires tokens", e)
	}
	if _, err := gateway.NewEndpoint(config.Serve{}, "0.0.0.0:0", nil); err == nil {
		t.Error("without auth or a token, 0.0.0.0 was accepted")
	}
}
