package gateway

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEncodedSchemasGoOnTheWireUnchanged: a tool whose schemas
// encodeSchemas stored as JSON is listed upstream byte for byte as the
// decoded tool was (go-sdk writes results with HTML escaping off, so an
// escaping encoder would turn "<" into "\u003c"), and go-sdk still
// accepts it.
func TestEncodedSchemasGoOnTheWireUnchanged(t *testing.T) {
	decoded := func() *mcp.Tool {
		return &mcp.Tool{
			Name: "search",
			InputSchema: map[string]any{
				"type":       "object",
				"required":   []any{"q"},
				"properties": map[string]any{"q": map[string]any{"type": "string", "description": "words, <tags> & \"quotes\""}},
			},
			OutputSchema: map[string]any{"type": "object", "properties": map[string]any{"hits": map[string]any{"type": "integer"}}},
		}
	}
	// As go-sdk encodes a result (jsonrpc2's jsonMarshal).
	wire := func(tool *mcp.Tool) []byte {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(&mcp.ListToolsResult{Tools: []*mcp.Tool{tool}}); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	want := wire(decoded())
	encoded := decoded()
	encodeSchemas(encoded)
	for name, s := range map[string]any{"input": encoded.InputSchema, "output": encoded.OutputSchema} {
		if _, ok := s.(json.RawMessage); !ok {
			t.Errorf("the %s schema is a %T after encodeSchemas, want json.RawMessage", name, s)
		}
	}
	if got := wire(encoded); !bytes.Equal(got, want) {
		t.Errorf("tools/list changes with encoded schemas:\n got %s\nwant %s", got, want)
	}
	if err := checkTool(encoded); err != nil {
		t.Errorf("go-sdk refuses the encoded tool: %v", err)
	}

	bare := &mcp.Tool{Name: "bare", InputSchema: map[string]any{"type": "object"}}
	encodeSchemas(bare)
	if bare.OutputSchema != nil {
		t.Errorf("encodeSchemas gave a tool without an output schema one: %#v", bare.OutputSchema)
	}
}
