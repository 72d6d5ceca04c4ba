package gateway_test

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeDefaultFirstListHasASlowServer: with no initial_list_wait set,
// a client that lists once and never again (as Codex does with tools)
// still gets the tools of a server that becomes ready 2 s after the
// client asked, over stdio and over HTTP. On stdio the session's start is
// logged with the client's name, which it gives only in initialize.
func TestServeDefaultFirstListHasASlowServer(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			g := newGate(t)
			cfg := writeConfig(t, directExposure,
				demoServer(t, "fast", filepath.Join(t.TempDir(), "calls"), ""),
				demoServer(t, "slow", filepath.Join(t.TempDir(), "calls"), "", "--initialize-gate", g.addr()))
			args := []string{"--log-level", "debug", "--config", cfg}
			if transport == "http" {
				args = append(args, "--http", "127.0.0.1:0")
			}
			p := startServe(t, nil, args...)
			var cs *mcp.ClientSession
			if transport == "http" {
				cs = connectServe(t, p.url(t), nil)
			} else {
				c := mcp.NewClient(&mcp.Implementation{Name: "lists-once", Version: "1"}, nil)
				var err error
				cs, err = c.Connect(t.Context(), &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = cs.Close() })
			}
			held := g.waiting(t) // slow is in its handshake, and stays there

			type listing struct {
				names []string
				err   error
			}
			listed := make(chan listing, 1)
			go func() {
				res, err := cs.ListTools(t.Context(), nil)
				l := listing{err: err}
				if res != nil {
					for _, tl := range res.Tools {
						l.names = append(l.names, tl.Name)
					}
				}
				listed <- l
			}()
			p.waitLine(t, regexp.MustCompile(`the first list waits for servers still starting`))
			if transport == "stdio" {
				// Logged at initialize, so before the line just seen.
				p.mu.Lock()
				lines := slices.Clone(p.lines)
				p.mu.Unlock()
				started := regexp.MustCompile(`upstream session started: .*client=(\S*)`)
				if i := slices.IndexFunc(lines, started.MatchString); i < 0 || started.FindStringSubmatch(lines[i])[1] != "lists-once" {
					t.Errorf("the stdio session's start is not logged with client=lists-once:\n%s", strings.Join(lines, "\n"))
				}
			}
			// The server is slow, not the test: its handshake is let go
			// 2 s after the client asked.
			release := time.AfterFunc(2*time.Second, func() { _, _ = held.Write([]byte{1}) })
			t.Cleanup(func() { release.Stop() })
			var l listing
			select {
			case l = <-listed:
			case <-t.Context().Done():
				t.Fatal("the first tools/list never came back")
			}
			if l.err != nil {
				t.Fatal(l.err)
			}
			if !slices.Contains(l.names, "mcp__fast__echo") || !slices.Contains(l.names, "mcp__slow__echo") {
				t.Fatalf("first tools/list = %v, want the tools of fast and of slow, ready 2 s after the client asked", l.names)
			}
		})
	}
}
