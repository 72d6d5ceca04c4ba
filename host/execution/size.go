package execution

import (
	"encoding/base64"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ResultSize is how many bytes res takes as JSON, counted without
// serializing its bulk: the texts (with their escapes) and the base64 of
// the binary data of its content blocks are counted, the rest of each
// block, structuredContent and _meta are serialized. It can be off by a
// few bytes per block (HTML escapes, a field's empty form), never by the
// size of a text or of data: enough for a limit, without a copy of a
// large result.
func ResultSize(res *mcp.CallToolResult) int {
	if res == nil {
		return 0
	}
	n := max(0, len(res.Content)-1) // the commas
	for _, c := range res.Content {
		n += blockSize(c)
	}
	if res.StructuredContent == nil && res.Meta == nil && !res.IsError {
		return n + contentOnlyLen // the common result: no serializing at all
	}
	rest := *res
	rest.Content = []mcp.Content{}
	return n + len(blockJSONOf(&rest))
}

// The JSON length of the fixed parts of the common shapes, so that
// ResultSize serializes nothing for a result of plain text blocks (it
// runs on every call the gateway serves).
var (
	// contentOnlyLen: a result with content and nothing else, its
	// content empty: {"content":[]}.
	contentOnlyLen = len(blockJSONOf(&mcp.CallToolResult{Content: []mcp.Content{}}))
	// plainTextLen: a text block without annotations or _meta, its text
	// empty.
	plainTextLen = len(blockJSON(&mcp.TextContent{}))
)

// blockSize is ResultSize for one content block.
func blockSize(c mcp.Content) int {
	data := base64.StdEncoding.EncodedLen
	switch b := c.(type) {
	case *mcp.TextContent:
		if b.Annotations == nil && b.Meta == nil {
			return plainTextLen + jsonTextLen(b.Text)
		}
		short := *b
		short.Text = ""
		return len(blockJSON(&short)) + jsonTextLen(b.Text)
	case *mcp.ImageContent:
		short := *b
		short.Data = []byte{}
		return len(blockJSON(&short)) + data(len(b.Data))
	case *mcp.AudioContent:
		short := *b
		short.Data = []byte{}
		return len(blockJSON(&short)) + data(len(b.Data))
	case *mcp.EmbeddedResource:
		if b.Resource == nil {
			break
		}
		r := *b.Resource
		r.Text, r.Blob = "", nil
		short := *b
		short.Resource = &r
		return len(blockJSON(&short)) + jsonTextLen(b.Resource.Text) + data(len(b.Resource.Blob))
	}
	return len(blockJSON(c))
}

// blockJSONOf is the JSON of v, or an empty estimate when it cannot be
// serialized (then the tool result could not be sent either).
func blockJSONOf(v any) []byte {
	b, err := marshalCompact(v)
	if err != nil {
		return nil
	}
	return b
}
