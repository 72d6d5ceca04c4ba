package cli_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/host/cli"
	"github.com/toolgate/toolgate/host/tokenauth/tokenauthtest"
	"github.com/toolgate/toolgate/internal/testbin"
)

// TestServeHTTPWithAuth is an operator starting `toolgate serve --http`
// with an auth block: it says where tokens come from, refuses a request
// without one with the challenge a client logs in from, and serves one
// with a token from the issuer.
func TestServeHTTPWithAuth(t *testing.T) {
	iss := tokenauthtest.New(t)
	cfg := filepath.Join(t.TempDir(), "toolgate.hcl")
	src := fmt.Sprintf(`serve {
  auth {
    issuer   = %q
    resource = "https://toolgate.test/mcp"
  }
}
server "demo" { command = %q }
`, iss.URL, testbin.Path(t, "mcp-demo"))
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	stderr := &lineWriter{lines: make(chan string, 256)}
	done := make(chan int, 1)
	go func() {
		done <- cli.Run(ctx, []string{"serve", "--http", "127.0.0.1:0", "--config", cfg}, cli.IO{In: strings.NewReader(""), Out: &strings.Builder{}, Err: stderr, LookupEnv: noUserConfig})
	}()
	defer func() {
		cancel()
		if code := <-done; code != cli.ExitOK {
			t.Errorf("exit code %d\n%s", code, stderr.buf.String())
		}
	}()
	stderr.waitFor(t, "OAuth access token from "+iss.URL)
	stderr.mu.Lock()
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp`).FindString(stderr.buf.String())
	stderr.mu.Unlock()
	if url == "" {
		t.Fatalf("no URL in:\n%s", stderr.buf.String())
	}
	initialize := func(token string) *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp := initialize("")
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Errorf("without a token: %s %q", resp.Status, resp.Header.Get("WWW-Authenticate"))
	}
	tok := iss.Token(t, "k1", tokenauthtest.Claims{Subject: "alice", Audience: []string{"https://toolgate.test/mcp"}})
	if resp := initialize(tok); resp.StatusCode != http.StatusOK {
		t.Errorf("with a token: %s", resp.Status)
	}
}
