package mcpdemo

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// registerResources adds --resources N: resources demo://doc/00001..N
// (text "document I"), the template demo://item/{id}, the prompt greet
// (argument name, completed from a fixed list), and the tools
// touch_resource and add_resource that exercise resources/updated and
// resources/list_changed.
func (d *Demo) registerResources() {
	s := d.server
	for i := 1; i <= d.cfg.Resources; i++ {
		d.addDoc(fmt.Sprintf("demo://doc/%05d", i), fmt.Sprintf("document %d", i))
	}
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "item", URITemplate: "demo://item/{id}", MIMEType: "text/plain",
		Description: "An item by id; reading it answers \"item <id>\"."},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := strings.TrimPrefix(req.Params.URI, "demo://item/")
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "item " + id}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greet someone by name.",
		Arguments: []*mcp.PromptArgument{{Name: "name", Description: "who to greet", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "a greeting", Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Say hello to " + req.Params.Arguments["name"] + "."}},
			}}, nil
		})
	mcp.AddTool(s, d.decorate(&mcp.Tool{Name: "touch_resource", Description: "Send notifications/resources/updated for a URI to its subscribers."}),
		func(ctx context.Context, _ *mcp.CallToolRequest, in struct {
			URI string `json:"uri"`
		}) (*mcp.CallToolResult, any, error) {
			if err := d.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: in.URI}); err != nil {
				return nil, nil, err
			}
			return textResult("touched " + in.URI), nil, nil
		})
	mcp.AddTool(s, d.decorate(&mcp.Tool{Name: "add_resource", Description: "Add a text resource at runtime; go-sdk announces it with notifications/resources/list_changed."}),
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			URI  string `json:"uri"`
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			d.addDoc(in.URI, in.Text)
			return textResult("added " + in.URI), nil, nil
		})
}

func (d *Demo) addDoc(uri, text string) {
	d.server.AddResource(&mcp.Resource{URI: uri, Name: strings.TrimPrefix(uri, "demo://"), MIMEType: "text/plain"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: text}}}, nil
		})
}

// complete answers completion/complete for greet's name argument.
func complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	var vals []string
	for _, v := range []string{"alice", "albert", "bob"} {
		if strings.HasPrefix(v, req.Params.Argument.Value) {
			vals = append(vals, v)
		}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: vals, Total: len(vals)}}, nil
}
