package catalog

import (
	"maps"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// isUntrustedMetaKey reports _meta keys through which a server could pose
// as a first-party connector in the host's UI or logs; only the host may
// set them, so they are dropped from whatever a server lists.
func isUntrustedMetaKey(k string) bool {
	switch k {
	case "connector_id", "connector_name", "connector_display_name",
		"connector_description", "connectorDescription":
		return true
	}
	return false
}

// withoutUntrustedMeta returns a shallow copy of t with its own top-level
// _meta map, minus the untrusted keys: the caller's tool stays untouched
// and later edits to either map do not leak into the other.
func withoutUntrustedMeta(t *mcp.Tool) *mcp.Tool {
	c := *t
	if t.Meta == nil {
		return &c
	}
	meta := maps.Clone(t.Meta)
	maps.DeleteFunc(meta, func(k string, _ any) bool { return isUntrustedMetaKey(k) })
	c.Meta = meta
	return &c
}

// modelVisible reads _meta.ui.visibility. Anything malformed or absent
// means visible: hiding a tool is an explicit opt-in by the server, so a
// sloppy _meta must not make tools vanish.
func modelVisible(meta mcp.Meta) bool {
	var ui map[string]any
	switch v := meta["ui"].(type) {
	case map[string]any:
		ui = v
	case mcp.Meta:
		ui = v
	default:
		return true
	}
	switch vis := ui["visibility"].(type) {
	case []any:
		for _, s := range vis {
			if s == "model" {
				return true
			}
		}
		return false
	case []string:
		for _, s := range vis {
			if s == "model" {
				return true
			}
		}
		return false
	default:
		return true
	}
}
