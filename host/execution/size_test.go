package execution

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestResultSize: the counted size is the size of the JSON go-sdk sends,
// within a few bytes per block and the HTML escapes encoding/json adds,
// for every kind of bulky content.
func TestResultSize(t *testing.T) {
	text := strings.Repeat("plain \"quoted\" <tag> é€😀\n\x01 ", 5000)
	data := []byte(strings.Repeat("\x00\xff binary", 3000))
	tests := map[string]*mcp.CallToolResult{
		"empty":         {},
		"text":          {Content: []mcp.Content{&mcp.TextContent{Text: text}}},
		"image":         {Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: data}}},
		"audio":         {Content: []mcp.Content{&mcp.AudioContent{MIMEType: "audio/wav", Data: data}}},
		"text resource": {Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a", Text: text}}}},
		"blob resource": {Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b", Blob: data}}}},
		"everything": {
			IsError:           true,
			Meta:              mcp.Meta{"k": "v"},
			StructuredContent: map[string]any{"text": text},
			Content: []mcp.Content{
				&mcp.TextContent{Text: text}, &mcp.ImageContent{MIMEType: "image/png", Data: data},
				&mcp.ResourceLink{URI: "file:///c", Name: "c"},
			},
		},
	}
	for name, res := range tests {
		t.Run(name, func(t *testing.T) {
			wire, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			got, want := ResultSize(res), len(wire)
			// encoding/json writes <, > and & as \u003c… (5 more
			// bytes each), which the count leaves out.
			html := 0
			for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
				html += 5 * strings.Count(string(wire), esc)
			}
			// A field left empty to be counted apart may be
			// omitted or written empty: a few bytes per block.
			if slack := 16 * (len(res.Content) + 1); got > want+slack || got < want-html-slack {
				t.Errorf("ResultSize = %d, the JSON has %d bytes", got, want)
			}
		})
	}
}

// TestResultSizePlainTextExact: the common result (text blocks, nothing
// else), counted without serializing, has exactly the size of its JSON;
// a block with annotations or a result with more takes the careful path
// and still agrees.
func TestResultSizePlainTextExact(t *testing.T) {
	tests := map[string]*mcp.CallToolResult{
		"one text":        {Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}},
		"texts to escape": {Content: []mcp.Content{&mcp.TextContent{Text: "a\"b\\c\n\x01"}, &mcp.TextContent{Text: "é€😀"}}},
		"empty text":      {Content: []mcp.Content{&mcp.TextContent{}}},
		"annotated text":  {Content: []mcp.Content{&mcp.TextContent{Text: "x", Annotations: &mcp.Annotations{Priority: 0.5}}}},
		"text with _meta": {Content: []mcp.Content{&mcp.TextContent{Text: "x", Meta: mcp.Meta{"k": "v"}}}},
		"structured":      {Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: map[string]any{"x": 1}},
		"tool error":      {Content: []mcp.Content{&mcp.TextContent{Text: "failed"}}, IsError: true},
		"result _meta":    {Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, Meta: mcp.Meta{"k": "v"}},
	}
	for name, res := range tests {
		t.Run(name, func(t *testing.T) {
			wire, err := marshalCompact(res)
			if err != nil {
				t.Fatal(err)
			}
			if got := ResultSize(res); got != len(wire) {
				t.Errorf("ResultSize = %d, the JSON %s has %d bytes", got, wire, len(wire))
			}
		})
	}
}

// TestResultSizePlainTextAllocatesNothing: the gateway counts every
// result it serves; the common one is counted without a copy.
func TestResultSizePlainTextAllocatesNothing(t *testing.T) {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}, &mcp.TextContent{Text: "world"}}}
	if n := testing.AllocsPerRun(100, func() { ResultSize(res) }); n != 0 {
		t.Errorf("ResultSize of a plain text result allocates %.0f times per call, want 0", n)
	}
}
