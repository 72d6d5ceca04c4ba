package reviewer_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/plugins/guardian/internal/reviewer"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/guardian"
	"github.com/toolgate/toolgate/sdk/plugintest"
)

func ptr[T any](v T) *T { return &v }

func configured(t testing.TB, cfg string) *guardian.Client {
	t.Helper()
	c := plugintest.Guardian(t, reviewer.New(reviewer.Options{Backoff: time.Millisecond}))
	configure(t, c, cfg)
	return c
}

func configure(t testing.TB, c *guardian.Client, cfg string) {
	t.Helper()
	diags, err := c.Configure(context.Background(), json.RawMessage(cfg))
	if err != nil || sdk.HasErrors(diags) {
		t.Fatalf("Configure(%s) = %v, %v", cfg, diags, err)
	}
}

func workspace(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeCall(session, path string) guardian.Action {
	return guardian.Action{
		Server: "files", Tool: "write_file", Arguments: json.RawMessage(fmt.Sprintf(`{"path":%q,"content":"x"}`, path)),
		Annotations: &sdk.Annotations{Destructive: ptr(true), OpenWorld: ptr(false)}, SessionID: session, CallID: "c",
	}
}

func readCall(session string) guardian.Action {
	return guardian.Action{
		Server: "files", Tool: "read_file", Arguments: json.RawMessage(`{"path":"README.md"}`),
		Annotations: &sdk.Annotations{ReadOnly: true}, SessionID: session, CallID: "c",
	}
}

func review(t *testing.T, c *guardian.Client, a guardian.Action) guardian.Verdict {
	t.Helper()
	v, err := c.Review(t.Context(), a)
	if err != nil {
		t.Fatalf("Review: %v", err)
	}
	if v.RiskLevel == guardian.RiskUnspecified || v.Rationale == "" {
		t.Errorf("verdict %+v lacks a risk level or rationale", v)
	}
	return v
}

func TestRulesEngine(t *testing.T) {
	ws := workspace(t)
	c := configured(t, fmt.Sprintf(`{"engine": "rules", "workspace": %q}`, ws))
	if v := review(t, c, writeCall("s1", "/etc/passwd")); v.Outcome != guardian.OutcomeDeny || v.RiskLevel != guardian.RiskHigh || !strings.Contains(v.Rationale, "outside the workspace") {
		t.Errorf("write outside the workspace: %+v, want a high-risk denial", v)
	}
	if v := review(t, c, readCall("s2")); v.Outcome != guardian.OutcomeAllow || v.RiskLevel != guardian.RiskLow {
		t.Errorf("read-only call: %+v, want a low-risk allow", v)
	}
	if v := review(t, c, writeCall("s2", filepath.Join(ws, "a.txt"))); v.Outcome != guardian.OutcomeAllow {
		t.Errorf("write inside the workspace: %+v, want allow", v)
	}
}

func TestDefaultConfigIsRules(t *testing.T) {
	c := configured(t, `{}`)
	if v := review(t, c, readCall("s")); v.Outcome != guardian.OutcomeAllow {
		t.Errorf("read-only call with the default config: %+v", v)
	}
	if v := review(t, c, writeCall("s", "/etc/passwd")); v.Outcome != guardian.OutcomeDeny {
		t.Errorf("write to /etc with the default workspace: %+v", v)
	}
}

func TestServerTrustAndHosts(t *testing.T) {
	c := configured(t, `{"allowed_hosts": ["api.github.com"], "server": {"gh": {"trust": "high"}, "x": {"trust": "low"}}}`)
	fetch := func(server, url string) guardian.Action {
		return guardian.Action{Server: server, Tool: "fetch", Arguments: json.RawMessage(`{"url":"` + url + `"}`), Annotations: &sdk.Annotations{ReadOnly: true}, SessionID: server + url}
	}
	for _, tt := range []struct {
		a    guardian.Action
		want guardian.Outcome
	}{
		{fetch("web", "https://api.github.com/a"), guardian.OutcomeAllow},
		{fetch("web", "https://evil.test/a"), guardian.OutcomeDeny},
		{fetch("gh", "https://evil.test/a"), guardian.OutcomeAllow}, // trusted: high → medium
		{guardian.Action{Server: "x", Tool: "write", Arguments: json.RawMessage(`{}`), Annotations: &sdk.Annotations{Destructive: ptr(true)}, SessionID: "x"}, guardian.OutcomeDeny},
	} {
		if v := review(t, c, tt.a); v.Outcome != tt.want {
			t.Errorf("%s %s: %+v, want %v", tt.a.Server, tt.a.Arguments, v, tt.want)
		}
	}
}

func TestCircuitBreaker(t *testing.T) {
	ws := workspace(t)
	cfg := fmt.Sprintf(`{"workspace": %q}`, ws)
	deny, allow := writeCall("", "/etc/passwd"), readCall("")
	in := func(a guardian.Action, session string) guardian.Action { a.SessionID = session; return a }

	t.Run("consecutive denials", func(t *testing.T) {
		c := configured(t, cfg)
		for range reviewer.ConsecutiveDenialLimit {
			if v := review(t, c, in(deny, "a")); strings.Contains(v.Rationale, "circuit") {
				t.Fatalf("circuit opened too early: %q", v.Rationale)
			}
		}
		v := review(t, c, in(allow, "a"))
		if v.Outcome != guardian.OutcomeDeny || !strings.Contains(v.Rationale, "circuit breaker open") || !strings.Contains(v.Rationale, "a human must approve") {
			t.Errorf("a safe call after 3 denials: %+v, want the circuit-open denial", v)
		}
		if v := review(t, c, in(allow, "b")); v.Outcome != guardian.OutcomeAllow {
			t.Errorf("another session: %+v, want its own closed circuit", v)
		}
	})
	t.Run("an allow resets the count", func(t *testing.T) {
		c := configured(t, cfg)
		for _, a := range []guardian.Action{deny, deny, allow, deny, deny, allow} {
			if v := review(t, c, in(a, "a")); strings.Contains(v.Rationale, "circuit") {
				t.Fatalf("circuit opened without 3 consecutive denials: %q", v.Rationale)
			}
		}
	})
	t.Run("denials in the window", func(t *testing.T) {
		c := configured(t, cfg)
		for i := range reviewer.WindowDenialLimit - 1 {
			review(t, c, in(deny, "a"))
			review(t, c, in(allow, "a"))
			if i == 0 {
				review(t, c, in(deny, "a")) // two in a row: still below 3
				review(t, c, in(allow, "a"))
			}
		}
		// 10 denials among 20 reviews: the window limit trips.
		if v := review(t, c, in(allow, "a")); v.Outcome != guardian.OutcomeDeny || !strings.Contains(v.Rationale, "10 denials among the last") {
			t.Errorf("after 10 denials in the window: %+v", v)
		}
	})
}

// fakeModel serves chat completions with scripted answers, one per request
// (the last repeats); a nil answer waits until the client gives up.
func fakeModel(t *testing.T, answers ...func(http.ResponseWriter, *http.Request)) (url string, requests *atomic.Int32) {
	t.Helper()
	requests = new(atomic.Int32)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(requests.Add(1)) - 1
		_, _ = io.Copy(io.Discard, r.Body)
		if answer := answers[min(n, len(answers)-1)]; answer != nil {
			answer(w, r)
			return
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	return srv.URL + "/v1", requests
}

func reply(content string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []map[string]any{{"message": map[string]any{"role": "assistant", "content": content}}}})
	}
}

func fail(code int) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "upstream trouble", code) }
}

func llmConfig(url, timeout string) string {
	return fmt.Sprintf(`{"engine": "llm", "endpoint": %q, "model": "test-model", "timeout": %q}`, url, timeout)
}

func TestLLMEngine(t *testing.T) {
	for _, tt := range []struct {
		name     string
		answers  []func(http.ResponseWriter, *http.Request)
		want     guardian.Verdict
		requests int32
	}{
		{"allow", []func(http.ResponseWriter, *http.Request){reply(`{"outcome":"allow","risk_level":"low","user_authorization":"high","rationale":"asked for"}`)},
			guardian.Verdict{Outcome: guardian.OutcomeAllow, RiskLevel: guardian.RiskLow, UserAuthorization: guardian.AuthorizationHigh, Rationale: "asked for"}, 1},
		{"deny", []func(http.ResponseWriter, *http.Request){reply(`{"outcome":"deny","risk_level":"high","user_authorization":"low","rationale":"writes to /etc"}`)},
			guardian.Verdict{Outcome: guardian.OutcomeDeny, RiskLevel: guardian.RiskHigh, UserAuthorization: guardian.AuthorizationLow, Rationale: "writes to /etc"}, 1},
		{"malformed JSON is denied", []func(http.ResponseWriter, *http.Request){reply(`I think this is fine.`)},
			guardian.Verdict{Outcome: guardian.OutcomeDeny, RiskLevel: guardian.RiskHigh}, 1},
		{"500 then success is retried", []func(http.ResponseWriter, *http.Request){fail(500), reply(`{"outcome":"allow","risk_level":"medium","rationale":"ok"}`)},
			guardian.Verdict{Outcome: guardian.OutcomeAllow, RiskLevel: guardian.RiskMedium, Rationale: "ok"}, 2},
		{"a failing endpoint is denied", []func(http.ResponseWriter, *http.Request){fail(503)},
			guardian.Verdict{Outcome: guardian.OutcomeDeny, RiskLevel: guardian.RiskHigh}, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url, requests := fakeModel(t, tt.answers...)
			c := configured(t, llmConfig(url, "10s"))
			got := review(t, c, writeCall("s", "/etc/hosts"))
			if tt.want.Rationale == "" {
				if !strings.HasPrefix(got.Rationale, reviewer.FailedPrefix) {
					t.Errorf("rationale %q, want the fail-closed prefix %q", got.Rationale, reviewer.FailedPrefix)
				}
				got.Rationale = ""
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if n := requests.Load(); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
		})
	}
}

func TestLLMTimeoutIsDeadlineError(t *testing.T) {
	url, _ := fakeModel(t, nil)
	c := configured(t, llmConfig(url, "200ms"))
	if _, err := c.Review(t.Context(), writeCall("s", "/x")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded (the host's timeout text)", err)
	}
	// A timeout is not a verdict: three of them do not open the circuit.
	for range 2 {
		_, _ = c.Review(t.Context(), writeCall("s", "/x"))
	}
	url2, _ := fakeModel(t, reply(`{"outcome":"allow","risk_level":"low","rationale":"fine"}`))
	configure(t, c, llmConfig(url2, "10s"))
	if v := review(t, c, writeCall("s", "/x")); v.Outcome != guardian.OutcomeAllow {
		t.Errorf("after timeouts: %+v, want the model's allow", v)
	}
}

func TestNotConfigured(t *testing.T) {
	c := plugintest.Guardian(t, reviewer.New(reviewer.Options{}))
	if _, err := c.Review(t.Context(), readCall("s")); !errors.Is(err, sdk.ErrNotConfigured) {
		t.Errorf("err = %v, want ErrNotConfigured", err)
	}
}

func TestConfigureDiagnostics(t *testing.T) {
	t.Setenv("TOOLGATE_TEST_KEY", "sk-xyz-123456")
	type diag struct {
		Severity sdk.Severity
		Path     string
	}
	for _, tt := range []struct {
		name, cfg string
		want      []diag
	}{
		{"unknown engine", `{"engine": "magic"}`, []diag{{sdk.SeverityError, "engine"}}},
		{"unknown threshold", `{"threshold": "low"}`, []diag{{sdk.SeverityError, "threshold"}}},
		{"missing workspace", `{"workspace": "/no/such/dir"}`, []diag{{sdk.SeverityError, "workspace"}}},
		{"bad allowed host", `{"allowed_hosts": ["https://x.com"]}`, []diag{{sdk.SeverityError, "allowed_hosts"}}},
		{"bad trust", `{"server": {"gh": {"trust": "total"}}}`, []diag{{sdk.SeverityError, "server.gh.trust"}}},
		{"llm attributes with rules", `{"model": "m"}`, []diag{{sdk.SeverityWarning, "model"}}},
		{"llm without endpoint and model", `{"engine": "llm"}`, []diag{{sdk.SeverityError, "endpoint"}, {sdk.SeverityError, "model"}}},
		{"bad endpoint", `{"engine": "llm", "endpoint": "localhost:11434", "model": "m"}`, []diag{{sdk.SeverityError, "endpoint"}}},
		{"unset key variable", `{"engine": "llm", "endpoint": "https://x.test/v1", "model": "m", "api_key_env": "TOOLGATE_TEST_UNSET"}`, []diag{{sdk.SeverityError, "api_key_env"}}},
		{"key over plain http", `{"engine": "llm", "endpoint": "http://x.test/v1", "model": "m", "api_key_env": "TOOLGATE_TEST_KEY"}`, []diag{{sdk.SeverityWarning, "endpoint"}}},
		{"key over loopback http", `{"engine": "llm", "endpoint": "http://127.0.0.1:1/v1", "model": "m", "api_key_env": "TOOLGATE_TEST_KEY"}`, nil},
		{"bad timeout", `{"engine": "llm", "endpoint": "https://x.test", "model": "m", "timeout": "1 minute"}`, []diag{{sdk.SeverityError, "timeout"}}},
		{"bad max_attempts", `{"engine": "llm", "endpoint": "https://x.test", "model": "m", "max_attempts": 0}`, []diag{{sdk.SeverityError, "max_attempts"}}},
		{"fractional max_attempts", `{"engine": "llm", "endpoint": "https://x.test", "model": "m", "max_attempts": 1.5}`, []diag{{sdk.SeverityError, "max_attempts"}}},
		{"rules settings with llm", `{"engine": "llm", "endpoint": "https://x.test", "model": "m", "threshold": "high"}`, []diag{{sdk.SeverityWarning, ""}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := plugintest.Guardian(t, reviewer.New(reviewer.Options{}))
			diags, err := c.Configure(t.Context(), json.RawMessage(tt.cfg))
			if err != nil {
				t.Fatal(err)
			}
			var got []diag
			for _, d := range diags {
				got = append(got, diag{d.Severity, strings.Join(d.AttributePath, ".")})
				if d.Detail == "" || strings.Contains(d.Detail, "sk-xyz-123456") {
					t.Errorf("diagnostic %v: want a detail that says how to fix it and no secret", d)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s\n%v", diff, diags)
			}
		})
	}
}

// TestBinary runs the built Guardian as the host would, with both engines;
// the llm engine reads its API key from the environment the host passes.
func TestBinary(t *testing.T) {
	ws := workspace(t)
	c := plugintest.RunBinary(t, testbin.Path(t, binaryName), sdk.KindGuardian).(*guardian.Client)
	info, err := c.Info(t.Context())
	if err != nil || info.Kind != sdk.KindGuardian || info.ConfigSchema == nil {
		t.Fatalf("Info = %+v, %v", info, err)
	}
	configure(t, c, fmt.Sprintf(`{"workspace": %q}`, ws))
	if v := review(t, c, writeCall("s", "/etc/passwd")); v.Outcome != guardian.OutcomeDeny {
		t.Errorf("rules, write outside: %+v", v)
	}
	if v := review(t, c, readCall("s2")); v.Outcome != guardian.OutcomeAllow {
		t.Errorf("rules, read-only: %+v", v)
	}

	var auth atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		reply(`{"outcome":"deny","risk_level":"critical","rationale":"exfiltration"}`)(w, r)
	}))
	t.Cleanup(srv.Close)
	b, err := plugintest.StartBinary(t, testbin.Path(t, binaryName), sdk.KindGuardian, plugintest.BinaryOptions{Env: []string{"TOOLGATE_TEST_GUARDIAN_KEY=sk-from-env"}})
	if err != nil {
		t.Fatal(err)
	}
	llmClient := b.Plugin.(*guardian.Client)
	configure(t, llmClient, fmt.Sprintf(`{"engine": "llm", "endpoint": %q, "model": "m", "api_key_env": "TOOLGATE_TEST_GUARDIAN_KEY"}`, srv.URL))
	if v := review(t, llmClient, writeCall("s", "/x")); v.Outcome != guardian.OutcomeDeny || v.RiskLevel != guardian.RiskCritical || v.Rationale != "exfiltration" {
		t.Errorf("llm: %+v", v)
	}
	if got := auth.Load(); got != "Bearer sk-from-env" {
		t.Errorf("Authorization = %v, want the key from api_key_env", got)
	}
}

func BenchmarkRulesReview(b *testing.B) {
	c := configured(b, fmt.Sprintf(`{"workspace": %q, "allowed_hosts": ["api.github.com"]}`, workspace(b)))
	a := writeCall("bench", "src/main.go")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		v, err := c.Review(ctx, a)
		if err != nil || v.Outcome != guardian.OutcomeAllow {
			b.Fatalf("Review = %+v, %v", v, err)
		}
	}
}
