package host_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/exposure"
)

// Example embeds the host in a Go program that drives the model loop
// itself: load a configuration, start its servers, and for each model
// step take an exposure.Step — the tools to show the model, and the call
// path through approval to the server. (The gateway package's Example
// serves the same host to an MCP client instead.)
func Example() {
	ctx := context.Background()
	// A downstream MCP server with one read-only tool; a configuration
	// names it by URL (or by command, for a stdio server).
	url, stopDemo := startDemoServer()
	defer stopDemo()
	dir, err := os.MkdirTemp("", "toolgate-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "toolgate.hcl")
	src := fmt.Sprintf("audit_log = \"audit.jsonl\"\nserver \"demo\" {\n  url = %q\n}\n", url)
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		log.Fatal(err)
	}
	cfg, diags := config.Load(path, config.LoadOptions{})
	if diags.HasErrors() {
		log.Fatal(diags)
	}

	// No Asker: a call that needs a human is denied with a text that
	// says how to configure one.
	h, err := host.New(cfg, host.Options{Logger: hclog.NewNullLogger()})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	h.Start(ctx)
	if _, err := h.Manager.WaitStartup(ctx); err != nil {
		log.Fatal(err)
	}

	step := h.NewStep("session-1")
	for _, t := range step.Tools() {
		fmt.Println("shown to the model:", t.ModelName)
	}
	res := step.Call(ctx, exposure.CallRequest{Name: "mcp__demo__echo", Arguments: []byte(`{"text":"hello"}`)})
	// Raw is the server's result as it sent it; Output() is the text the
	// model is given (with the wall time, in the Codex shape).
	fmt.Println(res.Status+":", res.Raw.Content[0].(*mcp.TextContent).Text)
	// Output:
	// shown to the model: mcp__demo__echo
	// completed: hello
}

// startDemoServer serves a go-sdk MCP server with a read-only echo tool
// over Streamable HTTP, and returns its URL and how to stop it.
func startDemoServer() (url string, stop func()) {
	s := mcp.NewServer(&mcp.Implementation{Name: "demo"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in in) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	web := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	return web.URL, web.Close
}
