package cli_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/cli"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/internal/testwait"
)

func TestServeRejectsTwoTransports(t *testing.T) {
	cfg := filepath.Join(exampleDir(t), "config.hcl.example")
	r := run(t, nil, "serve", "--stdio", "--http", "127.0.0.1:0", "--config", cfg)
	if r.code != cli.ExitUsage || !strings.Contains(r.stderr, "choose one of --stdio and --http") {
		t.Fatalf("%+v", r)
	}
}

// TestServeStdioWithTheExampleConfig is a desktop client starting
// `toolgate serve` on the example config: it lists and calls tools over
// stdin/stdout, then closes stdin, and toolgate exits cleanly.
func TestServeStdioWithTheExampleConfig(t *testing.T) {
	cfg := filepath.Join(exampleDir(t), "config.hcl.example")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := cli.Run(t.Context(), []string{"serve", "--config", cfg}, cli.IO{In: inR, Out: outW, Err: &stderr, LookupEnv: noUserConfig})
		_ = outW.Close()
		done <- code
	}()
	changed := make(chan struct{}, 16)
	c := mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	cs, err := c.Connect(t.Context(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// serve answers at once; each server's tools arrive with
	// notifications/tools/list_changed once it is ready.
	for {
		var names []string
		for tool, err := range cs.Tools(t.Context(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, tool.Name)
		}
		if slices.Contains(names, "mcp__demo__echo") && slices.Contains(names, "mcp__files__echo") {
			break
		}
		testwait.Recv(t, changed, "notifications/tools/list_changed bringing demo's and files' echo; tools = %v", names)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__demo__echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError {
		t.Fatalf("echo: %v %+v", err, res)
	}
	_ = cs.Close()
	if code := <-done; code != cli.ExitOK {
		t.Errorf("exit code %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "over stdio") {
		t.Errorf("stderr does not say what is served:\n%s", stderr.String())
	}
}

// noUserConfig is the environment without the developer's own config.
func noUserConfig(k string) (string, bool) {
	if k == "TOOLGATE_CONFIG" || k == "XDG_CONFIG_HOME" {
		return "", false
	}
	return os.LookupEnv(k)
}

// lineWriter collects output and signals each line, so a test can wait
// for a message without polling.
type lineWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	lines chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		select {
		case w.lines <- l:
		default:
		}
	}
	return len(p), nil
}

func (w *lineWriter) waitFor(t *testing.T, substr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		select {
		case l := <-w.lines:
			if strings.Contains(l, substr) {
				return
			}
		case <-ctx.Done():
			w.mu.Lock()
			defer w.mu.Unlock()
			t.Fatalf("stderr never said %q:\n%s", substr, w.buf.String())
		}
	}
}

// TestServeReloadsAWatchedConfig edits the configuration under a running
// `toolgate serve --watch`: an added server's tools reach the client, and
// a broken edit is refused while the old configuration keeps serving.
func TestServeReloadsAWatchedConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "toolgate.hcl")
	write := func(body string) {
		t.Helper()
		// Write and rename, as editors do, so the watcher sees one change.
		tmp := cfg + ".tmp"
		if err := os.WriteFile(tmp, []byte(strings.ReplaceAll(body, "DEMO", testbin.Path(t, "mcp-demo"))), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, cfg); err != nil {
			t.Fatal(err)
		}
	}
	write(`server "one" { command = "DEMO" }`)

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr := &lineWriter{lines: make(chan string, 256)}
	done := make(chan int, 1)
	go func() {
		code := cli.Run(t.Context(), []string{"serve", "--watch", "--config", cfg}, cli.IO{In: inR, Out: outW, Err: stderr, LookupEnv: noUserConfig})
		_ = outW.Close()
		done <- code
	}()
	changed := make(chan struct{}, 16)
	c := mcp.NewClient(&mcp.Implementation{Name: "ide", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	cs, err := c.Connect(t.Context(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cs.Close()
		if code := <-done; code != cli.ExitOK {
			t.Errorf("exit code %d", code)
		}
	}()
	tools := func() []string {
		var names []string
		for tool, err := range cs.Tools(t.Context(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, tool.Name)
		}
		return names
	}
	if slices.Contains(tools(), "mcp__two__echo") {
		t.Fatal("server two is served before it is configured")
	}

	write(`server "one" { command = "DEMO" }
server "two" { command = "DEMO" }`)
	stderr.waitFor(t, "configuration reloaded")
	for !slices.Contains(tools(), "mcp__two__echo") {
		select {
		case <-changed:
		case <-time.After(30 * time.Second):
			t.Fatalf("the added server's tools never reached the client: %v", tools())
		}
	}

	write(`server "one" { comand = "DEMO" }`)
	stderr.waitFor(t, "still running the previous one")
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__two__echo", Arguments: map[string]any{"text": "still here"}})
	if err != nil || res.IsError {
		t.Fatalf("after a refused reload: %v %+v", err, res)
	}
}
