package gateway_test

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
	"github.com/toolgate/toolgate/host/gateway"
)

// echoIn is the demo tool's input.
type echoIn struct {
	Text string `json:"text"`
}

// Example embeds toolgate in a Go program: a host built from a
// configuration, a gateway in front of it, and one upstream client served
// in memory (toolgate serve uses stdin/stdout or Streamable HTTP instead).
// The downstream server here is a go-sdk server over Streamable HTTP with
// one read-only tool, so the call is approved without asking anyone.
func Example() {
	ctx := context.Background()

	// A downstream MCP server (any stdio command or URL works the same).
	downstream := mcp.NewServer(&mcp.Implementation{Name: "demo"}, nil)
	mcp.AddTool(downstream, &mcp.Tool{Name: "echo", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	web := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return downstream }, nil))
	defer web.Close()

	// The configuration a user would write.
	dir, err := os.MkdirTemp("", "toolgate-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "toolgate.hcl")
	src := fmt.Sprintf("audit_log = \"audit.jsonl\"\nserver \"demo\" {\n  url = %q\n}\n", web.URL)
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		log.Fatal(err)
	}
	cfg, diags := config.Load(path, config.LoadOptions{})
	if diags.HasErrors() {
		log.Fatal(diags)
	}

	// A serving host: each call's approval question and what its server
	// sends back go to the upstream client of the call. Close the
	// gateway before the host.
	quiet := hclog.NewNullLogger()
	h, err := host.New(cfg, host.Options{Logger: quiet, Serving: true})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	h.Start(ctx)
	if _, err := h.Manager.WaitStartup(ctx); err != nil {
		log.Fatal(err)
	}
	gw, err := gateway.New(h, gateway.Options{Logger: quiet})
	if err != nil {
		log.Fatal(err) // errors.Is(err, gateway.ErrToolName): a configuration error
	}
	defer gw.Close()

	// One upstream client.
	serverEnd, clientEnd := mcp.NewInMemoryTransports()
	serveCtx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- gw.ServeStdio(serveCtx, serverEnd) }()
	defer func() { stop(); <-served }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example"}, nil).Connect(ctx, clientEnd, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tools.Tools {
		fmt.Println("tool:", t.Name)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__demo__echo", Arguments: map[string]any{"text": "hello through toolgate"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("result:", res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// tool: mcp__demo__echo
	// result: hello through toolgate
}
