package cli_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/cli"
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
	c := mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "mcp__demo__echo") || !slices.Contains(names, "mcp__files__echo") {
		t.Errorf("tools = %v", names)
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
