package gateway_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/gateway"
)

// TestOnlyInitializeOpensASession: a POST without a session id that is
// not an initialize request — garbage, another request, a notification, a
// batch — is answered without building a session (each costs a go-sdk
// server and an approval step); initialize builds exactly one.
func TestOnlyInitializeOpensASession(t *testing.T) {
	f := newFixture(t, "")
	srv := f.httpServer(t, config.Serve{}, nil)
	url := srv.URL + gateway.Path
	for name, body := range map[string]string{
		"not JSON":               "GET / HTTP/1.1",
		"not JSON-RPC":           `{"hello":"world"}`,
		"tools/list":             `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		"tools/call":             `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp__demo__echo","arguments":{}}}`,
		"a notification":         `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		"initialize without id":  `{"jsonrpc":"2.0","method":"initialize","params":{}}`,
		"initialize in a batch":  "[" + initialize + "]",
		"initialize, id is null": `{"jsonrpc":"2.0","id":null,"method":"initialize","params":{}}`,
	} {
		resp, answer := send(t, url, body, nil)
		if resp.StatusCode == http.StatusOK && strings.Contains(answer, `"serverInfo"`) {
			t.Errorf("%s: answered as an initialize: %s", name, answer)
		}
		if n := gateway.SessionsBuilt(f.gw); n != 0 {
			t.Fatalf("%s: %d session(s) built, want none (HTTP %d: %s)", name, n, resp.StatusCode, answer)
		}
	}
	if code, body := post(t, url, nil); code != http.StatusOK {
		t.Fatalf("initialize: HTTP %d: %s", code, body)
	}
	if n := gateway.SessionsBuilt(f.gw); n != 1 {
		t.Errorf("%d sessions built by one initialize, want 1", n)
	}
}

// TestMaxSessions: beyond serve { max_sessions } an initialize is
// answered HTTP 503 with a text that names the setting; the open
// sessions keep working, and requests that open no session are not
// refused for it.
func TestMaxSessions(t *testing.T) {
	f := newFixture(t, "serve {\n  max_sessions = 2\n}\n")
	srv := f.httpServer(t, config.Serve{}, nil)
	url := srv.URL + gateway.Path
	open := []*mcp.ClientSession{f.connectTo(t, srv, nil), f.connectTo(t, srv, nil)}

	resp, body := send(t, url, initialize, nil)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "max_sessions = 2") || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("initialize beyond the limit: HTTP %d (Retry-After %q): %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if resp, body := send(t, url, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil); resp.StatusCode == http.StatusServiceUnavailable {
		t.Errorf("a request that opens no session was refused for max_sessions: %s", body)
	}
	for i, cs := range open {
		if got := text(call(t, cs, "mcp__demo__echo", map[string]any{"text": "still here"})); got != "still here" {
			t.Errorf("session %d after the refusal: %q", i, got)
		}
	}
}

// TestMessageSizeCap: a request body over gateway.MaxMessageBytes is
// answered HTTP 413 with the limit, whether it would open a session or
// belongs to one; nothing is built for it.
func TestMessageSizeCap(t *testing.T) {
	f := newFixture(t, "")
	srv := f.httpServer(t, config.Serve{}, nil)
	url := srv.URL + gateway.Path
	pad := strings.Repeat("x", gateway.MaxMessageBytes)
	huge := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"` + pad + `","version":"1"}}}`
	resp, body := send(t, url, huge, nil)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "4194304") {
		t.Errorf("an oversized initialize: HTTP %d: %.200s", resp.StatusCode, body)
	}
	if n := gateway.SessionsBuilt(f.gw); n != 0 {
		t.Errorf("%d session(s) built for an oversized request", n)
	}

	resp, _ = send(t, url, initialize, nil)
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatalf("initialize: HTTP %d without a session id", resp.StatusCode)
	}
	hdr := map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-06-18"}
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp__demo__echo","arguments":{"text":"` + pad + `"}}}`
	resp, body = send(t, url, call, hdr)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "4194304") {
		t.Errorf("an oversized call in a session: HTTP %d: %.200s", resp.StatusCode, body)
	}
}
