//go:build unix

package gateway_test

import (
	"context"
	"io"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/gateway"
	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testwait"
)

// TestStdioShutdownAnswersACallItCuts is a desktop client talking to a
// real `toolgate serve --stdio` over its pipes when SIGTERM arrives with a
// call in flight: the call gets the shutdown tool error (written before
// the session closes) and the server is told to cancel it.
func TestStdioShutdownAnswersACallItCuts(t *testing.T) {
	fifo, lines, stop, err := procwatch.LineFIFO(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	cfg := writeConfig(t, "serve {\n  drain_grace = \"1ms\"\n}\n", demoServer(t, "demo", fifo, ""))
	p := startServe(t, nil, "--stdio", "--config", cfg)
	go func() { _, _ = io.Copy(io.Discard, p.stderr) }()
	changed := make(chan struct{}, 16)
	c := mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	cs, err := c.Connect(t.Context(), &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	waitTool(t, cs, changed, "mcp__demo__slow")

	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := cs.CallTool(context.WithoutCancel(t.Context()), &mcp.CallToolParams{Name: "mcp__demo__slow", Arguments: map[string]any{"ms": 3600000}})
		done <- outcome{res, err}
	}()
	waitEvent(t, lines, "call", "slow")
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	out := testwait.Recv(t, done, "the answer to the call SIGTERM cut")
	if out.err != nil {
		t.Fatalf("the cut call got no answer: %v", out.err)
	}
	if !out.res.IsError || text(out.res) != gateway.ShutdownCutText {
		t.Errorf("the cut call's answer = %q (isError %v), want the shutdown tool error", text(out.res), out.res.IsError)
	}
	waitEvent(t, lines, "cancel_notification", "")
	if code := p.exitCode(t); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0", code)
	}
}
