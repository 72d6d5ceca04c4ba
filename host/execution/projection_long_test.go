package execution

import (
	"bytes"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// eventProjectionOfAll is EventProjection the straightforward way, which
// serializes the whole result: what the shortened path must equal.
func eventProjectionOfAll(t *testing.T, res *mcp.CallToolResult) []byte {
	t.Helper()
	wire := *res
	b, err := marshalCompact(&wire)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) <= EventResultMaxBytes {
		return b
	}
	return truncatedProjection(Truncate(string(b), EventResultMaxBytes), res.IsError)
}

// TestEventProjectionOfLongTexts: leaving the middle of long texts out of
// the serialization changes nothing in the projection, whatever the
// texts hold (escapes, HTML characters, multi-byte and invalid UTF-8) and
// wherever the truncation's cut falls.
func TestEventProjectionOfLongTexts(t *testing.T) {
	pieces := []string{"plain ascii ", `"quoted" `, `back\slash `, "new\nline\ttab\r\b\f", "\x01\x1f ctl ",
		"<html> & ", "é€😀 ", "\u2028\u2029 ", "\xff\xe2\x82 bad ", `\u003c literal `}
	mixed := func(n int, start int) string {
		var b strings.Builder
		for i := start; b.Len() < n; i++ {
			b.WriteString(pieces[i%len(pieces)])
		}
		return b.String()
	}
	long := 3*textKept + 5000
	tests := map[string]*mcp.CallToolResult{
		"one long text":           {Content: []mcp.Content{&mcp.TextContent{Text: mixed(long, 0)}}},
		"long text of ascii only": {Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("a", 2*long)}}},
		"long text among others, isError": {IsError: true, Content: []mcp.Content{
			&mcp.TextContent{Text: "short"},
			&mcp.TextContent{Text: mixed(long, 3)},
			&mcp.ImageContent{MIMEType: "image/png", Data: []byte("png")},
			&mcp.TextContent{Text: mixed(long+7, 6)},
		}},
		"cut inside a character": {Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("€", long/3+11)}}},
		"long text with structured content": {
			Content:           []mcp.Content{&mcp.TextContent{Text: mixed(long, 1)}},
			StructuredContent: map[string]any{"k": "<v>"},
		},
	}
	for name, res := range tests {
		t.Run(name, func(t *testing.T) {
			want := eventProjectionOfAll(t, res)
			got := EventProjection(res, nil)
			if !bytes.Equal(got, want) {
				t.Errorf("projection differs from serializing everything:\ngot  %.300q…%q\nwant %.300q…%q",
					got, got[max(0, len(got)-300):], want, want[max(0, len(want)-300):])
			}
		})
	}
}

// TestShortenLongTextsLeavesShortResultsAlone: a result without long
// texts is serialized as it is.
func TestShortenLongTextsLeavesShortResultsAlone(t *testing.T) {
	blocks := []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", 3*textKept)}}
	got, hidden := shortenLongTexts(blocks)
	if hidden != 0 || &got[0] != &blocks[0] {
		t.Errorf("a text of 3×textKept bytes was shortened (hidden %d)", hidden)
	}
}
