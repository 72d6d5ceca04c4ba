package execution

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRedactResultReachesEveryText(t *testing.T) {
	redact := func(s string) string { return strings.ReplaceAll(s, "s3cret", "[REDACTED]") }
	res := &mcp.CallToolResult{
		Content: []mcp.Content{
			&mcp.TextContent{Text: "token s3cret"},
			&mcp.ImageContent{Data: []byte("s3cret"), MIMEType: "image/png"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///x", Text: "key=s3cret"}},
		},
		StructuredContent: map[string]any{"nested": []any{"s3cret", 1.0}, "plain": "ok"},
	}
	got := RedactResult(res, redact)
	if got == res {
		t.Fatal("a result holding the secret was returned unchanged")
	}
	if text := got.Content[0].(*mcp.TextContent).Text; text != "token [REDACTED]" {
		t.Errorf("text = %q", text)
	}
	if data := string(got.Content[1].(*mcp.ImageContent).Data); data != "s3cret" {
		t.Errorf("binary data was changed: %q", data)
	}
	if text := got.Content[2].(*mcp.EmbeddedResource).Resource.Text; text != "key=[REDACTED]" {
		t.Errorf("embedded text = %q", text)
	}
	if v := got.StructuredContent.(map[string]any)["nested"].([]any)[0]; v != "[REDACTED]" {
		t.Errorf("structured content = %v", got.StructuredContent)
	}
	// The server's result is not modified in place: the event projection
	// of an unredacted result is built from it.
	if res.Content[0].(*mcp.TextContent).Text != "token s3cret" {
		t.Error("RedactResult changed its input")
	}
	clean := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "nothing here"}}}
	if RedactResult(clean, redact) != clean {
		t.Error("a result without secrets was copied")
	}
}
