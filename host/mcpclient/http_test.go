package mcpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/toolgate/toolgate/internal/testbin"
)

// testServer is a go-sdk MCP server with an "echo" tool behind a
// middleware the test programs per JSON-RPC method.
type testServer struct {
	*httptest.Server
	mu       sync.Mutex
	handler  http.Handler // replaced by restart
	srv      *mcp.Server  // behind handler; its sessions end with it
	stateful bool
	// answer, when set, may answer a POST itself instead of the server.
	answer func(w http.ResponseWriter, r *http.Request, method string) bool
	calls  map[string]int // POSTs seen per JSON-RPC method
}

func newTestServer(t *testing.T, stateful bool) *testServer {
	t.Helper()
	ts := &testServer{stateful: stateful, calls: map[string]int{}}
	ts.restart()
	ts.Server = httptest.NewServer(http.HandlerFunc(ts.serve))
	t.Cleanup(func() {
		ts.Close()
		ts.mu.Lock()
		closeSessions(ts.srv)
		ts.mu.Unlock()
	})
	return ts
}

// closeSessions ends a server's sessions: an HTTP server going away does
// not end the MCP sessions it served.
func closeSessions(srv *mcp.Server) {
	if srv == nil {
		return
	}
	for ss := range srv.Sessions() {
		_ = ss.Close()
	}
}

func echoServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	return srv
}

// restart replaces the server process: every session id it handed out
// is unknown afterwards and answered 404.
func (ts *testServer) restart() {
	srv := echoServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: !ts.stateful, JSONResponse: true})
	ts.mu.Lock()
	old := ts.srv
	ts.handler, ts.srv = h, srv
	ts.mu.Unlock()
	closeSessions(old) // a restarted server forgets its sessions
}

func (ts *testServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		// No standalone stream: keeps the tests about POST.
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var method string
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		method = peekMessage(body).Method
		ts.mu.Lock()
		ts.calls[method]++
		ts.mu.Unlock()
	}
	ts.mu.Lock()
	answer, h := ts.answer, ts.handler
	ts.mu.Unlock()
	if answer != nil && r.Method == http.MethodPost && answer(w, r, method) {
		return
	}
	h.ServeHTTP(w, r)
}

func (ts *testServer) setAnswer(f func(w http.ResponseWriter, r *http.Request, method string) bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.answer = f
}

func (ts *testServer) count(method string) int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.calls[method]
}

func httpClient(t *testing.T, url string, h HTTP) *Client {
	t.Helper()
	h.URL = url
	if h.Retry.Initial == 0 {
		h.Retry.Initial, h.Retry.Max = time.Millisecond, time.Millisecond
	}
	c, err := New(Options{Name: "web", HTTP: &h})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func connected(t *testing.T, url string, h HTTP) *Client {
	t.Helper()
	c := httpClient(t, url, h)
	if err := c.Connect(t.Context()); err != nil {
		t.Fatal(err)
	}
	return c
}

func echo(ctx context.Context, c *Client, text string) (string, error) {
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}}, CallOptions{})
	if err != nil {
		return "", err
	}
	return res.Content[0].(*mcp.TextContent).Text, nil
}

func reply(status int, contentType, body string, headers ...string) func(http.ResponseWriter, *http.Request, string) bool {
	return func(w http.ResponseWriter, r *http.Request, method string) bool {
		if method != "tools/call" {
			return false
		}
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Add(headers[i], headers[i+1])
		}
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
		return true
	}
}

// TestStatusMapping: every answer the host cannot use becomes an error
// that says what happened, quotes a bounded body, and never a secret.
func TestStatusMapping(t *testing.T) {
	const token = "s3cr3t-token-value"
	long := strings.Repeat("x", 20000)
	tests := []struct {
		name   string
		answer func(http.ResponseWriter, *http.Request, string) bool
		check  func(t *testing.T, err error)
	}{
		{
			name:   "401 with a challenge is login required",
			answer: reply(401, "application/json", `{"error":"invalid_token"}`, "WWW-Authenticate", `Bearer resource_metadata="https://x/.well-known/oauth-protected-resource"`),
			check: func(t *testing.T, err error) {
				var ae *AuthError
				if !errors.As(err, &ae) || ae.Status != 401 || !ae.Challenge {
					t.Fatalf("err = %v, want a 401 AuthError with a challenge", err)
				}
				wantText(t, err, "HTTP 401 Unauthorized (login required)")
			},
		},
		{
			name:   "401 without a challenge is a plain HTTP error",
			answer: reply(401, "text/plain", "go away"),
			check: func(t *testing.T, err error) {
				var ae *AuthError
				if errors.As(err, &ae) {
					t.Fatalf("err = %v: a 401 without WWW-Authenticate is not a login problem", err)
				}
				wantHTTP(t, err, 401)
				wantText(t, err, "HTTP 401 Unauthorized: go away")
			},
		},
		{
			name: "403 insufficient_scope names the scope, found in a later header value",
			answer: reply(403, "application/json", `{}`, "WWW-Authenticate", `Basic realm="x"`,
				"WWW-Authenticate", `Bearer error="insufficient_scope", scope="repo:write"`),
			check: func(t *testing.T, err error) {
				var ae *AuthError
				if !errors.As(err, &ae) || ae.Scope != "repo:write" {
					t.Fatalf("err = %v, want insufficient scope repo:write", err)
				}
				wantText(t, err, `HTTP 403 Forbidden (insufficient scope "repo:write")`)
			},
		},
		{
			name:   "other 403 is a plain HTTP error",
			answer: reply(403, "text/plain", "nope"),
			check: func(t *testing.T, err error) {
				wantHTTP(t, err, 403)
				wantText(t, err, "HTTP 403 Forbidden: nope")
			},
		},
		{
			name:   "404 without a session id is a plain HTTP error",
			answer: reply(404, "text/plain", "no such endpoint"),
			check: func(t *testing.T, err error) {
				if errors.Is(err, ErrSessionExpired) {
					t.Fatal("a request without a session id cannot have an expired session")
				}
				wantHTTP(t, err, 404)
				wantText(t, err, "HTTP 404 Not Found: no such endpoint")
			},
		},
		{
			name:   "unexpected content type quotes the body",
			answer: reply(200, "text/html", "<html>captive portal</html>"),
			check: func(t *testing.T, err error) {
				wantHTTP(t, err, 200)
				wantText(t, err, `unexpected content type "text/html" in an HTTP 200 answer (want application/json or text/event-stream): <html>captive portal</html>`)
			},
		},
		{
			name:   "JSON that is not JSON",
			answer: reply(200, "application/json", "{oops"),
			check: func(t *testing.T, err error) {
				wantText(t, err, "response is not valid JSON (HTTP 200, application/json): {oops")
			},
		},
		{
			name:   "a long body is cut at 8192 bytes",
			answer: reply(500, "text/plain", long),
			check: func(t *testing.T, err error) {
				wantHTTP(t, err, 500)
				wantText(t, err, "... (truncated 11808 bytes)")
				var he *HTTPError
				errors.As(err, &he)
				if n := strings.Count(he.Body, "x"); n != BodyPreviewBytes {
					t.Errorf("preview keeps %d bytes, want %d", n, BodyPreviewBytes)
				}
			},
		},
		{
			name:   "secrets echoed by the server are redacted",
			answer: reply(502, "text/plain", "bad token "+token+` {"refresh_token":"r-123456"} Authorization: Bearer abcdef123`),
			check: func(t *testing.T, err error) {
				for _, secret := range []string{token, "r-123456", "abcdef123"} {
					if strings.Contains(err.Error(), secret) {
						t.Errorf("error quotes a secret %q: %v", secret, err)
					}
				}
				wantText(t, err, "[REDACTED]")
			},
		},
		{
			name:   "a JSON-RPC error body is the server's answer",
			answer: reply(500, "application/json", `{"jsonrpc":"2.0","id":2,"error":{"code":-32001,"message":"tool exploded"}}`),
			check: func(t *testing.T, err error) {
				var we *jsonrpc.Error
				if !errors.As(err, &we) || we.Message != "tool exploded" {
					t.Fatalf("err = %v, want the server's JSON-RPC error", err)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServer(t, false)
			c := connected(t, ts.URL, HTTP{Header: http.Header{"Authorization": {"Bearer " + token}}})
			ts.setAnswer(tc.answer)
			_, err := echo(t.Context(), c, "hi")
			if err == nil {
				t.Fatal("the call succeeded")
			}
			tc.check(t, err)
			if strings.Contains(err.Error(), ts.URL) {
				t.Errorf("the error quotes the server URL: %v", err)
			}
			// The session survives an unusable answer.
			ts.setAnswer(nil)
			if got, err := echo(t.Context(), c, "again"); err != nil || got != "again" {
				t.Fatalf("next call = %q, %v; the session should still work", got, err)
			}
		})
	}
}

func wantHTTP(t *testing.T, err error, status int) {
	t.Helper()
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != status {
		t.Fatalf("err = %v, want an HTTPError with status %d", err, status)
	}
}

func wantText(t *testing.T, err error, text string) {
	t.Helper()
	if !strings.Contains(err.Error(), text) {
		t.Errorf("err = %q\nwant it to contain %q", err, text)
	}
}

func TestStartupAuthErrorIsTyped(t *testing.T) {
	ts := newTestServer(t, true)
	ts.setAnswer(func(w http.ResponseWriter, r *http.Request, method string) bool {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcp"`)
		w.WriteHeader(http.StatusUnauthorized)
		return true
	})
	c := httpClient(t, ts.URL, HTTP{})
	err := c.Connect(t.Context())
	var ae *AuthError
	if !errors.As(err, &ae) || !ae.Challenge || ae.Status != 401 {
		t.Fatalf("Connect = %v, want a login-required AuthError", err)
	}
	if got := ts.count("initialize"); got != 1 {
		t.Errorf("initialize sent %d times: a 401 is never retried", got)
	}
}

// TestRetries: the handshake and tools/list ride out transient failures;
// tools/call never repeats.
func TestRetries(t *testing.T) {
	failFirst := func(method string, n int, status int) func(http.ResponseWriter, *http.Request, string) bool {
		var seen atomic.Int32
		return func(w http.ResponseWriter, r *http.Request, m string) bool {
			if m != method || int(seen.Add(1)) > n {
				return false
			}
			w.WriteHeader(status)
			return true
		}
	}
	for _, status := range []int{408, 429, 500, 502, 503, 504} {
		t.Run(fmt.Sprintf("initialize after two %d", status), func(t *testing.T) {
			ts := newTestServer(t, true)
			ts.setAnswer(failFirst("initialize", 2, status))
			c := connected(t, ts.URL, HTTP{})
			if got := ts.count("initialize"); got != 3 {
				t.Errorf("initialize sent %d times, want 3", got)
			}
			if _, err := c.ListTools(t.Context()); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("notifications/initialized", func(t *testing.T) {
		ts := newTestServer(t, true)
		ts.setAnswer(failFirst("notifications/initialized", 1, 503))
		connected(t, ts.URL, HTTP{})
		if got := ts.count("notifications/initialized"); got != 2 {
			t.Errorf("initialized sent %d times, want 2", got)
		}
	})
	t.Run("tools/list", func(t *testing.T) {
		ts := newTestServer(t, true)
		c := connected(t, ts.URL, HTTP{})
		ts.setAnswer(failFirst("tools/list", 2, 502))
		tools, err := c.ListTools(t.Context())
		if err != nil || len(tools) != 1 {
			t.Fatalf("ListTools = %d tools, %v", len(tools), err)
		}
		if got := ts.count("tools/list"); got != 3 {
			t.Errorf("tools/list sent %d times, want 3", got)
		}
	})
	t.Run("at most three attempts", func(t *testing.T) {
		ts := newTestServer(t, true)
		c := connected(t, ts.URL, HTTP{})
		ts.setAnswer(failFirst("tools/list", 100, 503))
		_, err := c.ListTools(t.Context())
		wantHTTP(t, err, 503)
		wantText(t, err, "HTTP 503 Service Unavailable after 3 attempts")
		if got := ts.count("tools/list"); got != 3 {
			t.Errorf("tools/list sent %d times, want 3", got)
		}
	})
	t.Run("not retried: 400", func(t *testing.T) {
		ts := newTestServer(t, true)
		c := connected(t, ts.URL, HTTP{})
		ts.setAnswer(failFirst("tools/list", 100, 400))
		_, err := c.ListTools(t.Context())
		wantHTTP(t, err, 400)
		if got := ts.count("tools/list"); got != 1 {
			t.Errorf("tools/list sent %d times, want 1", got)
		}
	})
	t.Run("tools/call is never retried", func(t *testing.T) {
		ts := newTestServer(t, true)
		c := connected(t, ts.URL, HTTP{})
		ts.setAnswer(failFirst("tools/call", 2, 500))
		for i := range 2 {
			if _, err := echo(t.Context(), c, "x"); err == nil {
				t.Fatalf("call %d succeeded; each 500 must surface", i+1)
			}
		}
		if got := ts.count("tools/call"); got != 2 {
			t.Errorf("tools/call sent %d times for two calls", got)
		}
		if got, err := echo(t.Context(), c, "ok"); err != nil || got != "ok" {
			t.Fatalf("third call = %q, %v", got, err)
		}
	})
	t.Run("network errors", func(t *testing.T) {
		ts := newTestServer(t, true)
		var drops atomic.Int32
		ts.setAnswer(func(w http.ResponseWriter, r *http.Request, m string) bool {
			if m != "initialize" || drops.Add(1) > 1 {
				return false
			}
			conn, _, _ := w.(http.Hijacker).Hijack()
			_ = conn.Close() // the connection dies before an answer
			return true
		})
		connected(t, ts.URL, HTTP{})
		if got := ts.count("initialize"); got != 2 {
			t.Errorf("initialize sent %d times, want 2", got)
		}
	})
}

// fakeServer answers a Streamable HTTP client in-process, so the retry
// schedule can run on synctest's clock.
type fakeServer struct {
	h      http.Handler
	mu     sync.Mutex
	fail   map[string]int // method → failures left
	status int
	times  map[string][]time.Duration
	start  time.Time
}

func (f *fakeServer) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet {
		return &http.Response{StatusCode: http.StatusMethodNotAllowed, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
	}
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	method := peekMessage(body).Method
	f.mu.Lock()
	f.times[method] = append(f.times[method], time.Since(f.start))
	failing := f.fail[method] > 0
	if failing {
		f.fail[method]--
	}
	f.mu.Unlock()
	if failing {
		return &http.Response{StatusCode: f.status, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

func TestRetryScheduleOnAFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := echoServer()
		f := &fakeServer{
			h: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
				&mcp.StreamableHTTPOptions{JSONResponse: true}),
			fail:   map[string]int{"initialize": 2, "tools/list": 5},
			status: http.StatusServiceUnavailable,
			times:  map[string][]time.Duration{},
			start:  time.Now(),
		}
		// Half the largest jitter: 10% off each default pause.
		retry := RetryPolicy{random: func() float64 { return 0.5 }}
		c, err := New(Options{Name: "fake", HTTP: &HTTP{URL: "http://mcp.test/mcp", Client: &http.Client{Transport: f}, Retry: retry}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Connect(t.Context()); err != nil {
			t.Fatal(err)
		}
		// Three attempts: at once, after 250 ms less 10% jitter, after
		// another 500 ms less 10%.
		want := []time.Duration{0, 225 * time.Millisecond, 675 * time.Millisecond}
		if diff := cmp.Diff(want, f.times["initialize"]); diff != "" {
			t.Errorf("initialize attempts (-want +got):\n%s", diff)
		}

		// A deadline the schedule cannot fit stops the retries early
		// rather than sleeping past it.
		f.mu.Lock()
		f.times, f.start = map[string][]time.Duration{}, time.Now()
		f.mu.Unlock()
		// The third attempt would come at 675 ms, past this deadline.
		ctx, cancel := context.WithTimeout(t.Context(), 600*time.Millisecond)
		defer cancel()
		_, err = c.ListTools(ctx)
		wantHTTP(t, err, 503)
		if diff := cmp.Diff([]time.Duration{0, 225 * time.Millisecond}, f.times["tools/list"]); diff != "" {
			t.Errorf("tools/list attempts under a 600 ms deadline (-want +got):\n%s", diff)
		}
	})
}

// TestSessionRecovery: a server that forgets its sessions (a restart) is
// re-initialized once, and the failed request replayed once.
func TestSessionRecovery(t *testing.T) {
	t.Run("ten concurrent callers share one recovery", func(t *testing.T) {
		ts := newTestServer(t, true)
		c := connected(t, ts.URL, HTTP{})
		ts.restart()
		var wg sync.WaitGroup
		errs := make(chan error, 10)
		for i := range 10 {
			wg.Go(func() {
				text := fmt.Sprint("call-", i)
				got, err := echo(t.Context(), c, text)
				if err == nil && got != text {
					err = fmt.Errorf("got %q, want %q", got, text)
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
		if got := ts.count("initialize"); got != 2 {
			t.Errorf("initialize sent %d times, want 2 (the first and one recovery)", got)
		}
		if c.State() != StateReady {
			t.Errorf("state = %v after recovery", c.State())
		}
	})
	t.Run("a second 404 goes to the caller; the next call recovers again", func(t *testing.T) {
		ts := newTestServer(t, true)
		c := connected(t, ts.URL, HTTP{})
		var forgetting atomic.Bool
		forgetting.Store(true)
		ts.setAnswer(func(w http.ResponseWriter, r *http.Request, m string) bool {
			if forgetting.Load() && m == "tools/call" {
				http.Error(w, "session not found", http.StatusNotFound)
				return true
			}
			return false
		})
		_, err := echo(t.Context(), c, "x")
		if !errors.Is(err, ErrSessionExpired) {
			t.Fatalf("err = %v, want ErrSessionExpired after one recovery", err)
		}
		if got, calls := ts.count("initialize"), ts.count("tools/call"); got != 2 || calls != 2 {
			t.Errorf("initialize ×%d, tools/call ×%d; want one recovery and one replay", got, calls)
		}
		forgetting.Store(false)
		ts.restart()
		if got, err := echo(t.Context(), c, "y"); err != nil || got != "y" {
			t.Fatalf("next call = %q, %v", got, err)
		}
		if got := ts.count("initialize"); got != 3 {
			t.Errorf("initialize sent %d times, want 3", got)
		}
	})
	t.Run("tools/list recovers too", func(t *testing.T) {
		ts := newTestServer(t, true)
		c := connected(t, ts.URL, HTTP{})
		ts.restart()
		if tools, err := c.ListTools(t.Context()); err != nil || len(tools) != 1 {
			t.Fatalf("ListTools = %d, %v", len(tools), err)
		}
	})
	t.Run("a 401 does not trigger recovery", func(t *testing.T) {
		ts := newTestServer(t, true)
		c := connected(t, ts.URL, HTTP{})
		ts.setAnswer(reply(401, "", "", "WWW-Authenticate", "Bearer"))
		if _, err := echo(t.Context(), c, "x"); err == nil {
			t.Fatal("call succeeded")
		}
		if got := ts.count("initialize"); got != 1 {
			t.Errorf("initialize sent %d times, want 1", got)
		}
	})
	t.Run("a stateless server's 404 is not an expired session", func(t *testing.T) {
		ts := newTestServer(t, false)
		c := connected(t, ts.URL, HTTP{})
		ts.setAnswer(reply(404, "text/plain", "gone"))
		if _, err := echo(t.Context(), c, "x"); errors.Is(err, ErrSessionExpired) || err == nil {
			t.Fatalf("err = %v", err)
		}
		if got := ts.count("initialize"); got != 1 {
			t.Errorf("initialize sent %d times, want 1", got)
		}
	})
}

func TestBodyPreview(t *testing.T) {
	tests := []struct {
		name, body string
		secrets    []string
		want       string
	}{
		{"short", "hello", nil, "hello"},
		{"exactly the limit", strings.Repeat("a", BodyPreviewBytes), nil, strings.Repeat("a", BodyPreviewBytes)},
		{"one over", strings.Repeat("a", BodyPreviewBytes+1), nil, strings.Repeat("a", BodyPreviewBytes) + "... (truncated 1 bytes)"},
		{"known secret", "token=abc is wrong; abcdefgh", []string{"abcdefgh"}, "token=[REDACTED] is wrong; [REDACTED]"},
		{"json member", `{"client_secret": "hunter2", "ok": 1}`, nil, `{"client_secret": "[REDACTED]", "ok": 1}`},
		{"bearer", "got Bearer eyJhbGciOi.x.y", nil, "got Bearer [REDACTED]"},
		{"invalid utf-8", "a\xffb", nil, "a\uFFFDb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := bodyPreview(strings.NewReader(tc.body), tc.secrets); got != tc.want {
				t.Errorf("preview = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRequestSecrets(t *testing.T) {
	h := http.Header{"Authorization": {"Bearer tok-1"}, "X-Api-Key": {"k-2"}, "Accept": {"text/plain"}}
	got := requestSecrets(h)
	want := map[string]bool{"Bearer tok-1": true, "tok-1": true, "k-2": true}
	for _, s := range got {
		if !want[s] {
			t.Errorf("unexpected secret %q", s)
		}
		delete(want, s)
	}
	if len(want) != 0 {
		t.Errorf("missing secrets %v", want)
	}
}

// fakeOAuth hands out whatever token it holds and "authorizes" by
// switching to the good one.
type fakeOAuth struct {
	mu         sync.Mutex
	token      string
	authorized int
	fail       error
}

func (f *fakeOAuth) TokenSource(context.Context) (oauth2.TokenSource, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: f.token}), nil
}

func (f *fakeOAuth) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	resp.Body.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.authorized++
	if f.fail != nil {
		return f.fail
	}
	f.token = "good"
	return nil
}

func (f *fakeOAuth) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.authorized
}

// TestOAuthHandlerIsAskedOncePerRequest: a 401 or a scope challenge goes
// to the OAuth handler, and the request is retried once; a refusal of the
// retry is the caller's error, not another authorization, and the session
// survives it.
func TestOAuthHandlerIsAskedOncePerRequest(t *testing.T) {
	ts := newTestServer(t, true)
	var stepUp atomic.Bool
	ts.setAnswer(func(w http.ResponseWriter, r *http.Request, method string) bool {
		if r.Header.Get("Authorization") != "Bearer good" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="x"`)
			w.WriteHeader(http.StatusUnauthorized)
			return true
		}
		if method == "tools/call" && stepUp.Load() {
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="admin"`)
			w.WriteHeader(http.StatusForbidden)
			return true
		}
		return false
	})
	h := &fakeOAuth{token: "stale"}
	c := connected(t, ts.URL, HTTP{OAuth: h})
	if n := h.count(); n != 1 {
		t.Fatalf("Authorize ran %d times to connect, want 1", n)
	}
	stepUp.Store(true)
	_, err := echo(t.Context(), c, "x")
	var ae *AuthError
	if !errors.As(err, &ae) || ae.Scope != "admin" {
		t.Fatalf("err = %v, want insufficient scope admin", err)
	}
	if n := h.count(); n != 2 {
		t.Errorf("Authorize ran %d times in all, want 2 (connect, one step-up)", n)
	}
	stepUp.Store(false)
	if got, err := echo(t.Context(), c, "ok"); err != nil || got != "ok" {
		t.Fatalf("next call = %q, %v; the session should survive", got, err)
	}

	t.Run("a failed authorization is an AuthError", func(t *testing.T) {
		ts := newTestServer(t, true)
		ts.setAnswer(func(w http.ResponseWriter, r *http.Request, _ string) bool {
			w.Header().Set("WWW-Authenticate", "Bearer")
			w.WriteHeader(http.StatusUnauthorized)
			return true
		})
		h := &fakeOAuth{fail: errors.New("run `toolgate login web`")}
		err := httpClient(t, ts.URL, HTTP{OAuth: h}).Connect(t.Context())
		var ae *AuthError
		if !errors.As(err, &ae) || !ae.Challenge || !strings.Contains(err.Error(), "toolgate login web") {
			t.Fatalf("Connect = %v", err)
		}
	})
}

// TestLogMessagesSurviveSessionRecovery: a server that restarts forgets
// the log level it was given; the recovered session asks again, so the
// server's log messages keep arriving.
func TestLogMessagesSurviveSessionRecovery(t *testing.T) {
	newHandler := func() http.Handler {
		srv := mcp.NewServer(&mcp.Implementation{Name: "logger", Version: "1"},
			&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}, Tools: &mcp.ToolCapabilities{}}})
		mcp.AddTool(srv, &mcp.Tool{Name: "log"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "hello"})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
		t.Cleanup(func() { closeSessions(srv) })
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	}
	var current atomic.Value
	current.Store(newHandler())
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		current.Load().(http.Handler).ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	got := make(chan *mcp.LoggingMessageParams, 4)
	c, err := New(Options{Name: "logger", HTTP: &HTTP{URL: hs.URL},
		Handlers: Handlers{Log: func(_ context.Context, p *mcp.LoggingMessageParams) { got <- p }}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Connect(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, when := range []string{"before the restart", "after it"} {
		if _, err := c.CallTool(t.Context(), &mcp.CallToolParams{Name: "log", Arguments: map[string]any{}}, CallOptions{}); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		select {
		case <-got:
		default:
			t.Errorf("%s: the call returned without its log message", when)
		}
		current.Store(newHandler()) // the server restarts and forgets its sessions
	}
}

// TestHTTPResultOverTheCapFailsOnlyItsCall: a Streamable HTTP answer to
// tools/call larger than MaxResultBytes is refused while its body is read
// (never decoded), the call fails saying so, and the session goes on.
func TestHTTPResultOverTheCapFailsOnlyItsCall(t *testing.T) {
	ts := newTestServer(t, true)
	c := httpClient(t, ts.URL, HTTP{})
	c.opts.MaxResultBytes = 64 << 10
	if err := c.Connect(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, err := echo(t.Context(), c, strings.Repeat("x", 200<<10))
	if err == nil || !strings.Contains(err.Error(), "max_result_bytes = 65536") || !strings.Contains(err.Error(), "before it was decoded") {
		t.Fatalf("an answer over the cap: err = %v", err)
	}
	if got, err := echo(t.Context(), c, "small"); err != nil || got != "small" {
		t.Fatalf("the session did not survive: %q, %v", got, err)
	}
}

// TestStdioResultOverTheCapFailsOnlyItsCall is the same over stdio, for
// an answer that ends within one read and for one many reads long.
func TestStdioResultOverTheCapFailsOnlyItsCall(t *testing.T) {
	c := newDemoClient(t, Options{})
	c.opts.MaxResultBytes = 100 << 10
	if err := c.Connect(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{120 << 10, 4 << 20} {
		_, err := c.CallTool(t.Context(), &mcp.CallToolParams{Name: "big", Arguments: map[string]any{"bytes": size}}, CallOptions{})
		var want string
		if err != nil {
			want = err.Error()
		}
		if !strings.Contains(want, "max_result_bytes = 102400") || !strings.Contains(want, "before it was decoded") {
			t.Fatalf("%d bytes over stdio: err = %v", size, err)
		}
		res, err := c.CallTool(t.Context(), &mcp.CallToolParams{Name: "big", Arguments: map[string]any{"bytes": 50 << 10}}, CallOptions{})
		if err != nil || res.IsError {
			t.Fatalf("after %d bytes the session did not survive: %v", size, err)
		}
	}
}

// TestHTTPTooDeepCostsOnlyItself is TestTooDeepCostsOnlyItself for a
// Streamable HTTP server: a tools/list page with a tool nested past
// go-sdk's limit keeps its other tools, a too-deep tools/call answer
// fails that call, and the session goes on.
func TestHTTPTooDeepCostsOnlyItself(t *testing.T) {
	ts := newTestServer(t, true)
	deepSchema := strings.Repeat(`{"type":"object","properties":{"a":`, 600) + `{"type":"string"}` + strings.Repeat("}}", 600)
	ts.setAnswer(func(w http.ResponseWriter, r *http.Request, method string) bool {
		body, _ := io.ReadAll(r.Body)
		id := string(peekMessage(body).ID)
		var out string
		switch {
		case method == "tools/list":
			out = `{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":[{"name":"deep","inputSchema":` + deepSchema +
				`},{"name":"echo","inputSchema":{"type":"object"}}]}}`
		case method == "tools/call" && bytes.Contains(body, []byte(`"name":"deep"`)):
			out = `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[],"structuredContent":` +
				strings.Repeat(`{"a":`, 1500) + "{}" + strings.Repeat("}", 1500) + `}}`
		default:
			r.Body = io.NopCloser(bytes.NewReader(body))
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, out)
		return true
	})
	logs := &testbin.Buffer{}
	c := httpClient(t, ts.URL, HTTP{})
	c.log = hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Warn})
	if err := c.Connect(t.Context()); err != nil {
		t.Fatal(err)
	}
	tools, err := c.ListTools(t.Context())
	if err != nil || len(tools) != 1 || tools[0].Name != "echo" {
		t.Fatalf("tools = %v, %v; want echo alone", tools, err)
	}
	if !strings.Contains(logs.String(), "its definition nests") || !strings.Contains(logs.String(), "index_in_page=0") {
		t.Errorf("log lacks the skipped tool:\n%s", logs.String())
	}
	_, err = c.CallTool(t.Context(), &mcp.CallToolParams{Name: "deep", Arguments: map[string]any{}}, CallOptions{})
	if err == nil || !strings.Contains(err.Error(), "levels deep, more than the 1000 levels") {
		t.Fatalf("a too-deep answer: err = %v", err)
	}
	if got, err := echo(t.Context(), c, "still here"); err != nil || got != "still here" {
		t.Fatalf("the session did not survive: %q, %v", got, err)
	}
}
