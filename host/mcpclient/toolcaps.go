package mcpclient

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Per-tool size caps. A description or schema past them costs every
// client's context on every listing (three 4 MiB descriptions are a
// 12 MB tools/list) and is broken or hostile; it is cut, with a marker
// and a warning, as other MCP hosts cap descriptions.
const (
	// DefaultMaxDescriptionBytes caps a tool's description when
	// Options.MaxDescriptionBytes is 0: far above any real tool's.
	DefaultMaxDescriptionBytes = 8 << 10
	// DefaultMaxSchemaBytes caps each of a tool's input and output
	// schemas (encoded) when Options.MaxSchemaBytes is 0.
	DefaultMaxSchemaBytes = 64 << 10
)

// capTool cuts t's description and schemas to the caps, in place, and
// returns what it changed, for the warning.
func capTool(t *mcp.Tool, maxDescription, maxSchema int) []string {
	if maxDescription <= 0 {
		maxDescription = DefaultMaxDescriptionBytes
	}
	if maxSchema <= 0 {
		maxSchema = DefaultMaxSchemaBytes
	}
	var cut []string
	if n := len(t.Description); n > maxDescription {
		t.Description = truncateDescription(t.Description, maxDescription)
		cut = append(cut, fmt.Sprintf("description of %d bytes cut to %d (max_description_bytes)", n, maxDescription))
	}
	if s, n, ok := capSchema(t.InputSchema, maxSchema, true); !ok {
		t.InputSchema = s
		cut = append(cut, fmt.Sprintf("input schema of %d bytes replaced by an open object schema (max_schema_bytes %d)", n, maxSchema))
	}
	if t.OutputSchema != nil {
		if _, n, ok := capSchema(t.OutputSchema, maxSchema, false); !ok {
			t.OutputSchema = nil
			cut = append(cut, fmt.Sprintf("output schema of %d bytes dropped (max_schema_bytes %d)", n, maxSchema))
		}
	}
	return cut
}

// truncationMarker ends a cut description, so a reader (and the model)
// knows the text is not whole.
const truncationMarker = " … [truncated by toolgate]"

func truncateDescription(s string, limit int) string {
	cut := max(limit-len(truncationMarker), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + truncationMarker
}

// capSchema reports whether schema encodes within limit; if not, it
// returns the schema that replaces an input schema: an object that takes
// any arguments, saying why, so the tool stays callable.
func capSchema(schema any, limit int, input bool) (any, int, bool) {
	if schema == nil {
		return schema, 0, true
	}
	n := 0
	switch s := schema.(type) {
	case json.RawMessage:
		n = len(s)
	default:
		b, err := json.Marshal(schema)
		if err != nil {
			return schema, 0, true // go-sdk decoded it; leave it to the callers' checks
		}
		n = len(b)
	}
	if n <= limit {
		return schema, n, true
	}
	if !input {
		return nil, n, false
	}
	return map[string]any{
		"type":        "object",
		"description": fmt.Sprintf("The server's input schema (%d bytes) was over toolgate's limit and was replaced; see the tool's description for its arguments.", n),
	}, n, false
}
