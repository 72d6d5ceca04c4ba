package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolgate/toolgate/plugins/guardian/internal/llm"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/guardian"
)

// fakeModel is an OpenAI-compatible chat-completions server whose answers
// each test scripts, one per request (the last one repeats). A nil answer
// never comes: it waits until the client gives up.
type fakeModel struct {
	srv      *httptest.Server
	requests atomic.Int32
	arrived  chan struct{} // one value per request, dropped when full
	release  chan struct{} // closed at cleanup: unblocks slow answers
	lastBody atomic.Value  // []byte
	lastAuth atomic.Value  // string
}

func newFakeModel(t *testing.T, answers ...func(w http.ResponseWriter, r *http.Request)) *fakeModel {
	t.Helper()
	f := &fakeModel{arrived: make(chan struct{}, 16), release: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(f.requests.Add(1)) - 1
		body, _ := io.ReadAll(r.Body)
		f.lastBody.Store(body)
		f.lastAuth.Store(r.Header.Get("Authorization"))
		select {
		case f.arrived <- struct{}{}:
		default:
		}
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		if answer := answers[min(n, len(answers)-1)]; answer != nil {
			answer(w, r)
			return
		}
		select {
		case <-r.Context().Done():
		case <-f.release:
		}
	}))
	t.Cleanup(f.srv.Close)
	t.Cleanup(func() { close(f.release) }) // runs before srv.Close
	return f
}

// reply answers with a chat completion whose content is content.
func reply(content string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion",
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": content}}},
		})
	}
}

func status(code int, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) { http.Error(w, body, code) }
}

func (f *fakeModel) engine(cfg llm.Config) *llm.Engine {
	cfg.Endpoint = f.srv.URL + "/v1"
	if cfg.Model == "" {
		cfg.Model = "test-model"
	}
	return llm.New(cfg, llm.Options{HTTPClient: f.srv.Client(), Backoff: time.Millisecond})
}

var action = guardian.Action{
	Server: "files", Tool: "write_file", Arguments: json.RawMessage(`{"path":"/etc/hosts","content":"x"}`),
	Annotations:     &sdk.Annotations{Destructive: func() *bool { b := true; return &b }()},
	ToolDescription: "Writes a file.",
	History:         []guardian.HistoryEntry{{Server: "files", Tool: "read_file", Arguments: json.RawMessage(`{"path":"a"}`), Outcome: "completed"}},
	SessionID:       "s", CallID: "c",
}

func TestVerdicts(t *testing.T) {
	for _, tt := range []struct {
		name    string
		content string
		want    guardian.Verdict
	}{
		{"allow", `{"outcome":"allow","risk_level":"low","user_authorization":"high","rationale":"The user asked for it."}`,
			guardian.Verdict{Outcome: guardian.OutcomeAllow, RiskLevel: guardian.RiskLow, UserAuthorization: guardian.AuthorizationHigh, Rationale: "The user asked for it."}},
		{"deny", `{"outcome":"deny","risk_level":"critical","user_authorization":"unknown","rationale":"It overwrites a system file."}`,
			guardian.Verdict{Outcome: guardian.OutcomeDeny, RiskLevel: guardian.RiskCritical, UserAuthorization: guardian.AuthorizationUnknown, Rationale: "It overwrites a system file."}},
		{"only outcome", `{"outcome":"deny"}`,
			guardian.Verdict{Outcome: guardian.OutcomeDeny, Rationale: "The reviewer model gave no rationale."}},
		{"fenced", "```json\n{\"outcome\":\"allow\",\"risk_level\":\"medium\",\"rationale\":\"ok\"}\n```",
			guardian.Verdict{Outcome: guardian.OutcomeAllow, RiskLevel: guardian.RiskMedium, Rationale: "ok"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeModel(t, reply(tt.content))
			got, err := f.engine(llm.Config{}).Review(t.Context(), action)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMalformed(t *testing.T) {
	for _, tt := range []struct{ name, content string }{
		{"prose", "Sure! The action looks fine."},
		{"no outcome", `{"risk_level":"low"}`},
		{"unknown outcome", `{"outcome":"maybe"}`},
		{"two objects", `{"outcome":"allow"} {"outcome":"deny"}`},
		{"truncated", `{"outcome":"allow","rationale":"cut`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeModel(t, reply(tt.content))
			_, err := f.engine(llm.Config{}).Review(t.Context(), action)
			if !errors.Is(err, llm.ErrMalformed) {
				t.Errorf("err = %v, want ErrMalformed", err)
			}
			if n := f.requests.Load(); n != 1 {
				t.Errorf("%d requests; a malformed answer must not be retried", n)
			}
		})
	}
	t.Run("not a chat completion", func(t *testing.T) {
		f := newFakeModel(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "<html>") })
		if _, err := f.engine(llm.Config{}).Review(t.Context(), action); !errors.Is(err, llm.ErrMalformed) {
			t.Errorf("err = %v, want ErrMalformed", err)
		}
	})
}

func TestRequest(t *testing.T) {
	f := newFakeModel(t, reply(`{"outcome":"allow"}`))
	if _, err := f.engine(llm.Config{Model: "llama3", APIKey: "sk-test-key", Instructions: "Never touch /etc."}).Review(t.Context(), action); err != nil {
		t.Fatal(err)
	}
	if got := f.lastAuth.Load(); got != "Bearer sk-test-key" {
		t.Errorf("Authorization = %q", got)
	}
	var body struct {
		Model          string            `json:"model"`
		Temperature    *float64          `json:"temperature"`
		ResponseFormat map[string]string `json:"response_format"`
		Messages       []struct{ Role, Content string }
	}
	if err := json.Unmarshal(f.lastBody.Load().([]byte), &body); err != nil {
		t.Fatal(err)
	}
	if body.Model != "llama3" || body.Temperature == nil || *body.Temperature != 0 || body.ResponseFormat["type"] != "json_object" {
		t.Errorf("request = %+v; want model llama3, temperature 0, json_object", body)
	}
	if len(body.Messages) != 2 || body.Messages[0].Role != "system" || body.Messages[1].Role != "user" {
		t.Fatalf("messages = %+v", body.Messages)
	}
	for _, want := range []string{`"outcome"`, `"risk_level"`, "untrusted", "Never touch /etc."} {
		if !strings.Contains(body.Messages[0].Content, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	user := body.Messages[1].Content
	var act map[string]any
	if err := json.Unmarshal([]byte(user[strings.Index(user, "{"):]), &act); err != nil {
		t.Fatalf("user message holds no action JSON: %v\n%s", err, user)
	}
	want := map[string]any{
		"tool": "mcp_tool_call", "server": "files", "tool_name": "write_file",
		"arguments":        map[string]any{"path": "/etc/hosts", "content": "x"},
		"tool_description": "Writes a file.",
		"annotations":      map[string]any{"destructive_hint": true, "read_only_hint": false},
		"recent_calls":     []any{map[string]any{"server": "files", "tool_name": "read_file", "arguments": map[string]any{"path": "a"}, "outcome": "completed"}},
	}
	if diff := cmp.Diff(want, act); diff != "" {
		t.Errorf("action JSON (-want +got):\n%s", diff)
	}
}

func TestHugeArgumentsAreTruncated(t *testing.T) {
	f := newFakeModel(t, reply(`{"outcome":"deny"}`))
	big := action
	big.Arguments = json.RawMessage(`{"content":"` + strings.Repeat("a", 100<<10) + `"}`)
	if _, err := f.engine(llm.Config{}).Review(t.Context(), big); err != nil {
		t.Fatal(err)
	}
	if n := len(f.lastBody.Load().([]byte)); n > 40<<10 {
		t.Errorf("request is %d bytes; arguments must be truncated", n)
	}
	if !strings.Contains(string(f.lastBody.Load().([]byte)), "arguments_truncated") {
		t.Error("the prompt does not say the arguments were truncated")
	}
}

func TestRetries(t *testing.T) {
	t.Run("500 then success", func(t *testing.T) {
		f := newFakeModel(t, status(500, "overloaded"), reply(`{"outcome":"allow","risk_level":"low","rationale":"fine"}`))
		v, err := f.engine(llm.Config{}).Review(t.Context(), action)
		if err != nil || v.Outcome != guardian.OutcomeAllow {
			t.Fatalf("Review = %+v, %v; want allow after a retry", v, err)
		}
		if n := f.requests.Load(); n != 2 {
			t.Errorf("%d requests, want 2", n)
		}
	})
	t.Run("429 twice then success", func(t *testing.T) {
		f := newFakeModel(t, status(429, "slow down"), status(503, "unavailable"), reply(`{"outcome":"deny"}`))
		if v, err := f.engine(llm.Config{}).Review(t.Context(), action); err != nil || v.Outcome != guardian.OutcomeDeny {
			t.Fatalf("Review = %+v, %v", v, err)
		}
	})
	t.Run("attempts exhausted", func(t *testing.T) {
		f := newFakeModel(t, status(502, "bad gateway"))
		_, err := f.engine(llm.Config{}).Review(t.Context(), action)
		if err == nil || !strings.Contains(err.Error(), "3 attempts failed") || !strings.Contains(err.Error(), "502") {
			t.Errorf("err = %v, want 3 failed attempts ending in 502", err)
		}
		if n := f.requests.Load(); n != 3 {
			t.Errorf("%d requests, want 3", n)
		}
	})
	t.Run("max_attempts 1", func(t *testing.T) {
		f := newFakeModel(t, status(500, "x"), reply(`{"outcome":"allow"}`))
		if _, err := f.engine(llm.Config{MaxAttempts: 1}).Review(t.Context(), action); err == nil {
			t.Error("want an error with a single attempt")
		}
	})
	t.Run("401 is not retried and the key is redacted", func(t *testing.T) {
		f := newFakeModel(t, status(401, "invalid api key sk-test-secret-key"))
		_, err := f.engine(llm.Config{APIKey: "sk-test-secret-key"}).Review(t.Context(), action)
		if err == nil || !strings.Contains(err.Error(), "401") {
			t.Fatalf("err = %v, want a 401 error", err)
		}
		if strings.Contains(err.Error(), "sk-test-secret-key") {
			t.Errorf("error leaks the API key: %v", err)
		}
		if n := f.requests.Load(); n != 1 {
			t.Errorf("%d requests; 401 must not be retried", n)
		}
	})
	t.Run("network error is retried", func(t *testing.T) {
		f := newFakeModel(t, func(w http.ResponseWriter, _ *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		}, reply(`{"outcome":"allow"}`))
		if v, err := f.engine(llm.Config{}).Review(t.Context(), action); err != nil || v.Outcome != guardian.OutcomeAllow {
			t.Fatalf("Review = %+v, %v; want allow after the dropped connection", v, err)
		}
	})
}

func TestDeadlines(t *testing.T) {
	t.Run("budget", func(t *testing.T) {
		f := newFakeModel(t, nil)
		_, err := f.engine(llm.Config{Budget: 100 * time.Millisecond}).Review(t.Context(), action)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want context.DeadlineExceeded", err)
		}
	})
	t.Run("caller cancels", func(t *testing.T) {
		f := newFakeModel(t, nil)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		defer func() { <-done }()
		go func() {
			defer close(done)
			<-f.arrived
			cancel()
		}()
		if _, err := f.engine(llm.Config{}).Review(ctx, action); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("retries stop at the budget", func(t *testing.T) {
		f := newFakeModel(t, status(500, "x"))
		e := llm.New(llm.Config{Endpoint: f.srv.URL + "/v1", Model: "m", Budget: 50 * time.Millisecond, MaxAttempts: 3},
			llm.Options{HTTPClient: f.srv.Client(), Backoff: time.Hour})
		if _, err := e.Review(t.Context(), action); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want context.DeadlineExceeded while waiting to retry", err)
		}
	})
}

func TestCompletionsURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:11434/v1":                   "http://localhost:11434/v1/chat/completions",
		"http://localhost:11434/v1/":                  "http://localhost:11434/v1/chat/completions",
		"https://api.openai.com/v1/chat/completions":  "https://api.openai.com/v1/chat/completions",
		"https://proxy.test/openai/chat/completions/": "https://proxy.test/openai/chat/completions",
	} {
		if got := llm.CompletionsURL(in); got != want {
			t.Errorf("CompletionsURL(%q) = %q, want %q", in, got, want)
		}
	}
}
