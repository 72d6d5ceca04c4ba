package execution

import (
	"encoding/json"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RedactResult returns res with redact applied to every text the server
// wrote: text blocks, embedded text resources, and the strings inside
// structuredContent. Binary data (images, audio, blobs) is left alone.
// When nothing changes, res itself is returned, so a result without
// secrets costs a scan and no copy.
func RedactResult(res *mcp.CallToolResult, redact func(string) string) *mcp.CallToolResult {
	if res == nil || redact == nil {
		return res
	}
	var out *mcp.CallToolResult
	copyOnce := func() {
		if out == nil {
			c := *res
			c.Content = append([]mcp.Content(nil), res.Content...)
			out = &c
		}
	}
	for i, block := range res.Content {
		switch b := block.(type) {
		case *mcp.TextContent:
			if t := redact(b.Text); t != b.Text {
				copyOnce()
				nb := *b
				nb.Text = t
				out.Content[i] = &nb
			}
		case *mcp.EmbeddedResource:
			if b.Resource == nil {
				continue
			}
			if t := redact(b.Resource.Text); t != b.Resource.Text {
				copyOnce()
				nr := *b.Resource
				nr.Text = t
				nb := *b
				nb.Resource = &nr
				out.Content[i] = &nb
			}
		}
	}
	if res.StructuredContent != nil {
		if v, changed := redactValue(res.StructuredContent, redact); changed {
			copyOnce()
			out.StructuredContent = v
		}
	}
	if out == nil {
		return res
	}
	return out
}

// redactValue applies redact to the strings in a decoded JSON value. A
// value of another Go type (a server-side struct) is redacted through its
// JSON form.
func redactValue(v any, redact func(string) string) (any, bool) {
	switch x := v.(type) {
	case string:
		r := redact(x)
		return r, r != x
	case map[string]any:
		var out map[string]any
		for k, item := range x {
			if r, changed := redactValue(item, redact); changed {
				if out == nil {
					out = maps.Clone(x)
				}
				out[k] = r
			}
		}
		if out == nil {
			return x, false
		}
		return out, true
	case []any:
		var out []any
		for i, item := range x {
			if r, changed := redactValue(item, redact); changed {
				if out == nil {
					out = append([]any(nil), x...)
				}
				out[i] = r
			}
		}
		if out == nil {
			return x, false
		}
		return out, true
	case nil, bool, float64, json.Number:
		return x, false
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v, false
	}
	text := string(b)
	clean := redact(text)
	if clean == text {
		return v, false
	}
	var back any
	if json.Unmarshal([]byte(clean), &back) != nil {
		return v, false
	}
	return back, true
}
