//go:build !windows

package gateway_test

import (
	"context"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/gateway"
)

// unixClient is an HTTP client whose every connection goes to the socket.
func unixClient(t *testing.T, path string) *http.Client {
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// serveUnix serves f's gateway on a unix socket endpoint until the test
// ends, and returns the socket's path.
func serveUnix(t *testing.T, f *fixture, serve config.Serve, lookup func(string) (string, bool)) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tg.sock")
	e, err := gateway.NewEndpoint(serve, gateway.UnixPrefix+path, lookup)
	if err != nil {
		t.Fatal(err)
	}
	if e.Network != "unix" || e.Addr != path {
		t.Fatalf("endpoint %+v", e)
	}
	ln, err := gateway.Listen(e)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.gw.ServeHTTP(ctx, ln, e) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
		if _, err := os.Lstat(path); !os.IsNotExist(err) {
			t.Errorf("the socket outlived the gateway: %v", err)
		}
	})
	return path
}

// TestUnixSocketListener: --http unix:/path serves MCP over a socket
// that only its owner may connect to (mode 0600, a socket file), refuses
// a second listener on a live socket, and replaces a stale one.
func TestUnixSocketListener(t *testing.T) {
	f := newFixture(t, "")
	path := serveUnix(t, f, config.Serve{}, nil)

	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want a socket with permissions 0600", fi.Mode())
	}

	// Clients make up the Host over a socket; any will do.
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: "http://toolgate.sock" + gateway.Path, HTTPClient: unixClient(t, path)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if got := text(call(t, cs, "mcp__demo__echo", map[string]any{"text": "over the socket"})); got != "over the socket" {
		t.Errorf("echo = %q", got)
	}

	e, err := gateway.NewEndpoint(config.Serve{}, gateway.UnixPrefix+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ln, err := gateway.Listen(e); err == nil || !strings.Contains(err.Error(), "in use") {
		if ln != nil {
			_ = ln.Close()
		}
		t.Errorf("a second listener on a live socket: %v", err)
	}

	t.Run("a stale socket is replaced", func(t *testing.T) {
		stale := filepath.Join(t.TempDir(), "stale.sock")
		old, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		old.SetUnlinkOnClose(false)
		_ = old.Close() // a killed toolgate leaves the file behind
		e, err := gateway.NewEndpoint(config.Serve{}, gateway.UnixPrefix+stale, nil)
		if err != nil {
			t.Fatal(err)
		}
		ln, err := gateway.Listen(e)
		if err != nil {
			t.Fatalf("Listen over a stale socket: %v", err)
		}
		_ = ln.Close()
	})
	t.Run("a regular file is never replaced", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "notes.txt")
		if err := os.WriteFile(file, []byte("mine"), 0o600); err != nil {
			t.Fatal(err)
		}
		e, _ := gateway.NewEndpoint(config.Serve{}, gateway.UnixPrefix+file, nil)
		if ln, err := gateway.Listen(e); err == nil || !strings.Contains(err.Error(), "not a socket") {
			if ln != nil {
				_ = ln.Close()
			}
			t.Errorf("Listen over a regular file: %v", err)
		}
	})
}

// TestUnixSocketTakesTheToken: serve { token_env_var } applies on a
// socket too.
func TestUnixSocketTakesTheToken(t *testing.T) {
	f := newFixture(t, "")
	path := serveUnix(t, f, config.Serve{TokenEnvVar: "TG_TOKEN"}, env("TG_TOKEN", "s3cret"))
	hc := unixClient(t, path)
	for _, tt := range []struct {
		auth string
		want int
	}{{"", http.StatusUnauthorized}, {"Bearer guess", http.StatusUnauthorized}, {"Bearer s3cret", http.StatusOK}} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://localhost"+gateway.Path, strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tt.auth != "" {
			req.Header.Set("Authorization", tt.auth)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("Authorization %q: HTTP %d, want %d", tt.auth, resp.StatusCode, tt.want)
		}
	}
}
