package gateway

import (
	"bytes"
	"encoding/json"
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

// encodeSchemas stores t's schemas as the JSON go-sdk would write for
// them. go-sdk's AddTool re-encodes a tool's input schema twice (and its
// output schema once) to check it, for every session that serves the
// tool, and tools/list encodes them again: a decoded schema is walked,
// its keys sorted, each time, where JSON is only copied (issue 30: most
// of what a new session cost beyond the go-sdk floor). The bytes on the
// wire stay the same: go-sdk writes with HTML escaping off, as here. A
// schema that does not encode is left as it is, for go-sdk to refuse.
func encodeSchemas(t *mcp.Tool) {
	for _, s := range []*any{&t.InputSchema, &t.OutputSchema} {
		if *s == nil {
			continue
		}
		if _, ok := (*s).(json.RawMessage); ok {
			continue
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(*s); err != nil {
			continue
		}
		*s = json.RawMessage(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	}
}
