package gateway_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/gateway"
)

func env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestEndpointRefusesUnsafeListeners(t *testing.T) {
	for _, tt := range []struct {
		name     string
		serve    config.Serve
		addr     string
		env      func(string) (string, bool)
		loopback bool
		token    bool
		err      string // "" = accepted
	}{
		{name: "default", loopback: true},
		{name: "config listen", serve: config.Serve{Listen: "127.0.0.1:9000"}, loopback: true},
		{name: "ipv6 loopback", addr: "[::1]:0", loopback: true},
		{name: "localhost", addr: "localhost:0", loopback: true},
		{name: "all interfaces without a token", addr: "0.0.0.0:8931", err: "refusing to serve on 0.0.0.0:8931 without a bearer token"},
		{name: "empty host means all interfaces", addr: ":8931", err: "without a bearer token"},
		{name: "a LAN address without a token", addr: "192.168.1.10:8931", err: `add token_env_var = "TOOLGATE_TOKEN" to the serve block`},
		{name: "a token variable that is not set", serve: config.Serve{TokenEnvVar: "TG_TOKEN"}, addr: "0.0.0.0:0", env: env(),
			err: `token_env_var = "TG_TOKEN", but $TG_TOKEN is empty or unset`},
		{name: "all interfaces with a token", serve: config.Serve{TokenEnvVar: "TG_TOKEN"}, addr: "0.0.0.0:0", env: env("TG_TOKEN", "s3cret"), token: true},
		{name: "loopback with a token requires it too", serve: config.Serve{TokenEnvVar: "TG_TOKEN"}, env: env("TG_TOKEN", "s3cret"), loopback: true, token: true},
		{name: "not host:port", addr: "8931", err: "must be host:port"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lookup := tt.env
			if lookup == nil {
				lookup = env()
			}
			e, err := gateway.NewEndpoint(tt.serve, tt.addr, lookup)
			if tt.err != "" {
				if !errors.Is(err, gateway.ErrUnsafeListen) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want ErrUnsafeListen with %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("the error quotes the token: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.Loopback != tt.loopback || e.RequiresToken() != tt.token {
				t.Errorf("loopback %v token %v, want %v %v", e.Loopback, e.RequiresToken(), tt.loopback, tt.token)
			}
		})
	}
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`

// post sends an initialize request with the given headers and returns
// the status and body.
func post(t *testing.T, url string, headers map[string]string) (int, string) {
	t.Helper()
	resp, body := send(t, url, initialize, headers)
	if resp.StatusCode == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("401 without WWW-Authenticate")
	}
	return resp.StatusCode, body
}

// send POSTs one JSON-RPC message on a connection of its own, closed
// afterwards, as a client that goes away would, and reads the answer.
func send(t *testing.T, url, msg string, headers map[string]string) (*http.Response, string) {
	t.Helper()
	resp := postMessage(t, t.Context(), url, msg, headers)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// postMessage POSTs one JSON-RPC message on a connection of its own,
// closed once the answer's body is; the caller reads and closes it.
func postMessage(t *testing.T, ctx context.Context, url, msg string, headers map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestHTTPRequestsMustBeLocalAndAuthorized(t *testing.T) {
	f := newFixture(t, "")
	open := f.httpServer(t, config.Serve{}, nil)
	locked := f.httpServer(t, config.Serve{TokenEnvVar: "TG_TOKEN"}, env("TG_TOKEN", "s3cret"))
	// A token read from a file with CRLF endings, or quoted with a space:
	// HTTP strips the blanks around a header value, so they cannot count.
	padded := f.httpServer(t, config.Serve{TokenEnvVar: "TG_TOKEN"}, env("TG_TOKEN", " s3cret\r\n"))
	for _, tt := range []struct {
		name    string
		url     string
		headers map[string]string
		status  int
	}{
		{"a local client", open.URL, nil, http.StatusOK},
		{"DNS rebinding: a foreign Host", open.URL, map[string]string{"Host": "evil.example"}, http.StatusForbidden},
		{"a foreign Host with a local port", open.URL, map[string]string{"Host": "evil.example:8931"}, http.StatusForbidden},
		{"localhost by name", open.URL, map[string]string{"Host": "localhost:8931"}, http.StatusOK},
		{"a page on another site", open.URL, map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{"a local page", open.URL, map[string]string{"Origin": "http://localhost:3000"}, http.StatusOK},
		{"an opaque origin", open.URL, map[string]string{"Origin": "null"}, http.StatusForbidden},
		{"no token", locked.URL, nil, http.StatusUnauthorized},
		{"a wrong token", locked.URL, map[string]string{"Authorization": "Bearer guess"}, http.StatusUnauthorized},
		{"the token in another scheme", locked.URL, map[string]string{"Authorization": "Basic s3cret"}, http.StatusUnauthorized},
		{"the token", locked.URL, map[string]string{"Authorization": "Bearer s3cret"}, http.StatusOK},
		{"the token, set with blanks around it", padded.URL, map[string]string{"Authorization": "Bearer s3cret"}, http.StatusOK},
		{"the token but a foreign Host", locked.URL, map[string]string{"Authorization": "Bearer s3cret", "Host": "evil.example"}, http.StatusForbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, body := post(t, tt.url+gateway.Path, tt.headers)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %s", status, tt.status, body)
			}
			if status == http.StatusOK && !strings.Contains(body, `"serverInfo"`) {
				t.Errorf("no initialize result: %s", body)
			}
			if strings.Contains(body, "s3cret") {
				t.Errorf("the response quotes the token: %s", body)
			}
		})
	}
}

// TestIdleHTTPSessionsAreClosed: a client that goes away without DELETE
// does not hold its session forever; a client listening on its event
// stream, or with a call in flight, is not idle.
func TestIdleHTTPSessionsAreClosed(t *testing.T) {
	ended := make(chan string, 8)
	log := hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: lineSignal{t, "upstream session ended", ended}})
	const idle = time.Second
	f := newFixtureWith(t, fixtureOptions{gateway: gateway.Options{Logger: log, SessionTimeout: idle, InputTimeout: idle}}, "")
	srv := f.httpServer(t, config.Serve{}, nil)
	url := srv.URL + gateway.Path

	// Opened first, so its idle time would run out first: a go-sdk client
	// keeps its GET event stream open.
	listener := f.connectTo(t, srv, nil)
	resp, body := send(t, url, initialize, nil)
	gone := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || gone == "" {
		t.Fatalf("initialize: status %d, session %q: %s", resp.StatusCode, gone, body)
	}
	select {
	case line := <-ended:
		if !strings.Contains(line, gone) {
			t.Fatalf("the first session closed for idleness is not the abandoned one: %s", line)
		}
	case <-time.After(60 * idle):
		t.Fatalf("an abandoned session was still open after %v", 60*idle)
	}
	resp, body = send(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		map[string]string{"Mcp-Session-Id": gone, "Mcp-Protocol-Version": "2025-06-18"})
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("a request of the closed session: status %d, want 404: %s", resp.StatusCode, body)
	}
	ms := 3 * idle.Milliseconds()
	if res := call(t, listener, "mcp__demo__slow", map[string]any{"ms": ms}); res.IsError {
		t.Errorf("a listening client's call of %d ms: %v", ms, text(res))
	}
}

// lineSignal writes log lines to the test log and sends each that
// contains want.
type lineSignal struct {
	t    *testing.T
	want string
	c    chan<- string
}

func (w lineSignal) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	if strings.Contains(string(p), w.want) {
		select {
		case w.c <- string(p):
		default:
		}
	}
	return len(p), nil
}

// TestCallArgumentsMustBeAnObject: tools/call arguments that are not a
// JSON object (or null, or absent) are refused as invalid params before
// anything runs, and malformed JSON never reaches the gateway's checks
// (go-sdk refuses the message); an object goes through.
func TestCallArgumentsMustBeAnObject(t *testing.T) {
	f := newFixture(t, "")
	url := f.httpServer(t, config.Serve{}, nil).URL + gateway.Path
	resp, body := send(t, url, initialize, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	session := map[string]string{"Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id"), "Mcp-Protocol-Version": "2025-06-18"}
	send(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session)
	for _, tt := range []struct{ args, want string }{
		{`"hello"`, `"code":-32602`},
		{`[1,2]`, `"code":-32602`},
		{` 7`, `"code":-32602`},
		{`{"text":"hello"`, `malformed`},
		{`{"text":"hello"}`, `"text":"hello"`},
		{`null`, `"result"`},
	} {
		_, body := send(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp__demo__echo","arguments":`+tt.args+`}}`, session)
		if !strings.Contains(body, tt.want) {
			t.Errorf("arguments %s: answered %s, want it to contain %s", tt.args, body, tt.want)
		}
	}
}
