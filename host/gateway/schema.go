package gateway

import (
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// checkTool reports why go-sdk's Server.AddTool would refuse t, by adding
// it to a scratch server. A downstream server controls these schemas, so
// every tool is checked once per catalog plan: a bad schema costs that one
// tool, in one log line, never the gateway and never every session.
//
// It repeats none of AddTool's checks (input schema present and of type
// "object", schemas that marshal to JSON, x-mcp-header annotations on
// primitive properties with distinct token names). go-sdk v1.8.0's own
// errors for those are as specific as ours were — they name the property,
// the offending character or type — so a copy could only drift from the
// rules go-sdk enforces. What go-sdk does not give is an error value:
// AddTool panics, and addTool turns that into one.
func checkTool(t *mcp.Tool) error {
	scratch := mcp.NewServer(&mcp.Implementation{Name: "toolgate-schema-check"}, nil)
	return addTool(scratch, t, nil)
}

// addTool adds t to server, returning go-sdk's refusal (a panic in
// AddTool, raised before the server changes) as an error.
func addTool(server *mcp.Server, t *mcp.Tool, h mcp.ToolHandler) (err error) {
	defer func() {
		switch r := recover().(type) {
		case nil:
		case error:
			err = fmt.Errorf("go-sdk refuses its schema: %w", r)
		default:
			err = fmt.Errorf("go-sdk refuses its schema: %w", errors.New(fmt.Sprint(r)))
		}
	}()
	server.AddTool(t, h)
	return nil
}
