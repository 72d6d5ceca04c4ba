package mcpclient

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// keepWellFormedTools rewrites one tools/list result so that each tool is
// decoded on its own: a tool go-sdk could not decode (a name that is a
// number, a schema that is a string) would otherwise fail the whole
// listing and cost the server every tool. Tools that cannot be decoded,
// and tools whose name does not survive decoding (a lone UTF-16
// surrogate becomes U+FFFD, so the name sent back on tools/call would
// not be the server's), are left out, and skip hears why with the tool's
// index in the page. A result that is not an object with a tools array
// is returned unchanged, for go-sdk to report.
func keepWellFormedTools(result json.RawMessage, skip func(index int, problem string)) json.RawMessage {
	var page map[string]json.RawMessage
	if json.Unmarshal(result, &page) != nil {
		return result
	}
	var raws []json.RawMessage
	if json.Unmarshal(page["tools"], &raws) != nil {
		return result
	}
	kept := make([]json.RawMessage, 0, len(raws))
	for i, raw := range raws {
		if problem := toolProblem(raw); problem != "" {
			skip(i, problem)
			continue
		}
		kept = append(kept, raw)
	}
	if len(kept) == len(raws) {
		return result
	}
	tools, err := json.Marshal(kept)
	if err != nil {
		return result
	}
	page["tools"] = tools
	out, err := json.Marshal(page)
	if err != nil {
		return result
	}
	return out
}

// toolProblem says what makes one listed tool unusable, or "" when it is
// fine.
func toolProblem(raw json.RawMessage) string {
	// The message, its result and the tools array hold the tool: 3
	// levels of go-sdk's limit are taken before the tool's own.
	if depth := jsonDepth(raw); depth+3 > maxMessageDepth {
		return fmt.Sprintf("its definition nests %d levels deep (an input or output schema nested too deep?), "+
			"more than the %d levels toolgate's MCP library (go-sdk) decodes in a tools/list answer", depth, maxMessageDepth-3)
	}
	var tool mcp.Tool
	if err := json.Unmarshal(raw, &tool); err != nil {
		return "it is not a valid tool: " + strings.TrimPrefix(err.Error(), "json: ")
	}
	switch {
	case tool.Name == "":
		return "it has no name"
	case strings.ContainsRune(tool.Name, utf8.RuneError):
		return fmt.Sprintf("its name %q is not valid Unicode (a lone UTF-16 surrogate?); it could not be called by that name", tool.Name)
	}
	return ""
}
