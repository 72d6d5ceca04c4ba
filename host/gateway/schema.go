package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// checkTool reports why go-sdk's Server.AddTool would refuse t. AddTool
// panics instead of returning an error, and a downstream server controls
// these schemas, so every tool is checked before it is added: a bad
// schema must cost that one tool, never the gateway.
func checkTool(t *mcp.Tool) error {
	if t.InputSchema == nil {
		return errors.New("it has no input schema")
	}
	var in map[string]any
	if err := remarshal(t.InputSchema, &in); err != nil {
		return fmt.Errorf("its input schema is not a JSON object: %v", err)
	}
	if in["type"] != "object" {
		return fmt.Errorf(`its input schema must have "type": "object" (it has %v)`, in["type"])
	}
	if t.OutputSchema != nil {
		var out any
		if err := remarshal(t.OutputSchema, &out); err != nil {
			return fmt.Errorf("its output schema is not valid JSON: %v", err)
		}
	}
	if err := checkHeaderAnnotations(in, "", map[string]bool{}); err != nil {
		return fmt.Errorf("its input schema has an invalid x-mcp-header annotation: %v", err)
	}
	return nil
}

func remarshal(v any, into any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

// checkHeaderAnnotations applies go-sdk's rules for x-mcp-header
// (parameters mirrored into HTTP headers): primitive properties only,
// a non-empty token as the header name, no duplicates ignoring case.
func checkHeaderAnnotations(schema map[string]any, prefix string, seen map[string]bool) error {
	props, _ := schema["properties"].(map[string]any)
	for name, v := range props {
		prop, ok := v.(map[string]any)
		if !ok {
			continue
		}
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		if raw, ok := prop["x-mcp-header"]; ok {
			switch prop["type"] {
			case "string", "integer", "boolean":
			default:
				return fmt.Errorf("property %q: x-mcp-header needs a string, integer or boolean property, not %v", path, prop["type"])
			}
			header, _ := raw.(string)
			if header == "" || strings.IndexFunc(header, func(r rune) bool { return !isTokenChar(r) }) >= 0 {
				return fmt.Errorf("property %q: x-mcp-header must be a non-empty HTTP header name", path)
			}
			if seen[strings.ToLower(header)] {
				return fmt.Errorf("property %q: x-mcp-header %q is used twice", path, header)
			}
			seen[strings.ToLower(header)] = true
		}
		if err := checkHeaderAnnotations(prop, path, seen); err != nil {
			return err
		}
	}
	return nil
}

// isTokenChar is RFC 9110's tchar.
func isTokenChar(r rune) bool {
	switch {
	case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		return true
	}
	return strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}

// addTool adds t to server. It recovers a panic from go-sdk all the same,
// in case a future go-sdk refuses something checkTool does not know.
func addTool(server *mcp.Server, t *mcp.Tool, h mcp.ToolHandler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("go-sdk refused the tool: %v", r)
		}
	}()
	server.AddTool(t, h)
	return nil
}
