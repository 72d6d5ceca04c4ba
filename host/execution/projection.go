package execution

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Texts that replace media blocks for a model without that input (Codex's
// literal wording).
const (
	ImageOmitted = "<image content omitted because you do not support image input>"
	AudioOmitted = "<audio content omitted because you do not support audio input>"
)

// EventResultMaxBytes caps the serialized result carried by a
// tool_call_end event (and its error text). The model path is not capped
// by it.
const EventResultMaxBytes = 1_048_576

// Item types of the content-items form.
const (
	ItemText  = "input_text"
	ItemImage = "input_image"
	ItemAudio = "input_audio"
)

// ModelOutput is a call's result as the model receives it.
type ModelOutput struct {
	// Text is the whole output as text, for a consumer that takes only
	// text. It is always set, even when Items is.
	Text string
	// Items is the content-items form, set only when the result carries
	// image or audio the model accepts.
	Items []Item
}

// Item is one entry of the content-items form.
type Item struct {
	Type string `json:"type"`           // ItemText, ItemImage or ItemAudio
	Text string `json:"text,omitempty"` // ItemText
	URL  string `json:"url,omitempty"`  // ItemImage, ItemAudio: a data: URL
}

// ModelProjection shapes a call's outcome for model m (Codex §10.2–10.3).
//
// err (a transport or host failure) becomes "tool call error: <err>".
// Otherwise image and audio blocks the model cannot take are replaced by
// [ImageOmitted] / [AudioOmitted]; then the body is the compact JSON of
// structuredContent when present and not null, else the content-items
// form when accepted media remains, else the compact JSON array of the
// content blocks as they appear on the wire. The text is prefixed with
// "Wall time: X.XXXX seconds\nOutput:\n" and middle-truncated to the
// model's output budget ([Truncate]; 0 means [DefaultOutputBudget]).
//
// In the items form the first item is the header and text items share the
// budget in order: a text item that no longer fits is truncated to what
// is left, later ones are dropped and counted in a closing note; media
// items are always kept. Text then renders the same content as JSON.
func ModelProjection(res *mcp.CallToolResult, err error, wall time.Duration, m Model) ModelOutput {
	budget := m.OutputBudgetBytes
	if budget <= 0 {
		budget = DefaultOutputBudget
	}
	header := fmt.Sprintf("Wall time: %.4f seconds\nOutput:", wall.Seconds())
	withHeader := func(body string) string {
		if body == "" {
			return header
		}
		return header + "\n" + body
	}
	if err != nil {
		return ModelOutput{Text: Truncate(withHeader("tool call error: "+err.Error()), budget)}
	}
	if res == nil {
		return ModelOutput{Text: Truncate(header, budget)}
	}
	if body, ok := structuredBody(res.StructuredContent); ok {
		return ModelOutput{Text: Truncate(withHeader(body), budget)}
	}
	blocks := sanitizeMedia(res.Content, m)
	out := ModelOutput{Text: Truncate(withHeader(contentJSON(blocks)), budget)}
	if hasMedia(blocks) {
		out.Items = budgetItems(append([]Item{{Type: ItemText, Text: header}}, contentItems(blocks)...), budget)
	}
	return out
}

// structuredBody renders structuredContent; ok is false when it is absent
// or JSON null (then the content blocks speak).
func structuredBody(v any) (string, bool) {
	if v == nil {
		return "", false
	}
	b, err := marshalCompact(v)
	if err != nil {
		// A value that cannot be rendered is treated as absent: the
		// content blocks usually carry the same data as text.
		return "", false
	}
	if string(b) == "null" {
		return "", false
	}
	return string(b), true
}

func sanitizeMedia(blocks []mcp.Content, m Model) []mcp.Content {
	out := make([]mcp.Content, len(blocks))
	for i, c := range blocks {
		switch c.(type) {
		case *mcp.ImageContent:
			if !m.ImageInput {
				c = &mcp.TextContent{Text: ImageOmitted}
			}
		case *mcp.AudioContent:
			if !m.AudioInput {
				c = &mcp.TextContent{Text: AudioOmitted}
			}
		}
		out[i] = c
	}
	return out
}

func hasMedia(blocks []mcp.Content) bool {
	for _, c := range blocks {
		switch c.(type) {
		case *mcp.ImageContent, *mcp.AudioContent:
			return true
		}
	}
	return false
}

// contentJSON is the compact JSON array of blocks in wire form.
func contentJSON(blocks []mcp.Content) string {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, c := range blocks {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(blockJSON(c))
	}
	b.WriteByte(']')
	return b.String()
}

func blockJSON(c mcp.Content) []byte {
	if c == nil {
		return []byte("null")
	}
	j, err := marshalCompact(c)
	if err != nil {
		// Only a malformed block from our own code could fail here; keep
		// the array valid and say what happened.
		j, _ = marshalCompact(map[string]string{"type": "text", "text": "unrenderable content block: " + err.Error()})
	}
	return j
}

func contentItems(blocks []mcp.Content) []Item {
	items := make([]Item, 0, len(blocks))
	for _, c := range blocks {
		switch c := c.(type) {
		case *mcp.TextContent:
			items = append(items, Item{Type: ItemText, Text: c.Text})
		case *mcp.ImageContent:
			items = append(items, Item{Type: ItemImage, URL: dataURL(c.MIMEType, c.Data)})
		case *mcp.AudioContent:
			items = append(items, Item{Type: ItemAudio, URL: dataURL(c.MIMEType, c.Data)})
		default:
			items = append(items, Item{Type: ItemText, Text: string(blockJSON(c))})
		}
	}
	return items
}

func dataURL(mime string, data []byte) string {
	if bytes.HasPrefix(data, []byte("data:")) && utf8.Valid(data) {
		return string(data)
	}
	if mime == "" {
		mime = "application/octet-stream"
	}
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// budgetItems spends budget bytes on text items in order; media items
// cost nothing and are always kept.
func budgetItems(items []Item, budget int) []Item {
	out := make([]Item, 0, len(items)+1)
	remaining, omitted := budget, 0
	for _, it := range items {
		if it.Type != ItemText {
			out = append(out, it)
			continue
		}
		switch {
		case len(it.Text) <= remaining:
			remaining -= len(it.Text)
		case remaining > 0:
			it.Text = Truncate(it.Text, remaining)
			remaining = 0
		default:
			omitted++
			continue
		}
		out = append(out, it)
	}
	if omitted > 0 {
		out = append(out, Item{Type: ItemText, Text: fmt.Sprintf("…%d text items omitted…", omitted)})
	}
	return out
}

// EventProjection is the copy of a call's outcome kept in the
// tool_call_end event: the raw result serialized as on the wire, or
// {"error": <message>} for a transport failure. A result whose JSON
// exceeds [EventResultMaxBytes] is replaced by
//
//	{"content":[{"type":"text","text":<middle-truncated JSON>}],"structuredContent":null,"_meta":null,"isError":<same>}
//
// where the text holds at most EventResultMaxBytes bytes (its escaped
// form may be larger). Error messages are truncated to the same size.
// It returns nil when there is neither a result nor an error.
func EventProjection(res *mcp.CallToolResult, err error) json.RawMessage {
	if err != nil {
		return mustMarshal(struct {
			Error string `json:"error"`
		}{Truncate(err.Error(), EventResultMaxBytes)})
	}
	if res == nil {
		return nil
	}
	wire := *res
	if wire.Content == nil {
		wire.Content = []mcp.Content{} // the wire field is required: [] not null
	}
	var hidden int
	wire.Content, hidden = shortenLongTexts(wire.Content)
	b, merr := marshalCompact(&wire)
	if merr != nil {
		return mustMarshal(struct {
			Error string `json:"error"`
		}{"serialize tool result: " + merr.Error()})
	}
	if hidden == 0 && len(b) <= EventResultMaxBytes {
		return b
	}
	return truncatedProjection(truncateAround(string(b), hidden, EventResultMaxBytes), res.IsError)
}

// truncatedProjection is the event projection of a result too large to
// keep whole: text is its middle-truncated JSON.
func truncatedProjection(text string, isError bool) json.RawMessage {
	return mustMarshal(struct {
		Content           []*mcp.TextContent `json:"content"`
		StructuredContent any                `json:"structuredContent"`
		Meta              any                `json:"_meta"`
		IsError           bool               `json:"isError"`
	}{
		Content: []*mcp.TextContent{{Text: text}},
		IsError: isError,
	})
}

// textKept is how much of each end of a long text block the event
// projection serializes: more than the half of EventResultMaxBytes that
// the middle truncation keeps of each end of the JSON, with room for the
// rune boundaries it looks for.
const textKept = EventResultMaxBytes/2 + 1024

// shortenLongTexts returns blocks with the middle of every text longer
// than 3×textKept left out, and how many bytes the JSON of what was left
// out takes. The projection of a large result keeps only both ends of its
// JSON, and JSON string escapes are per character, so serializing the
// ends of each long text and counting the JSON bytes of the middles gives
// the same projection as serializing everything, without a copy of a
// large result (or the several that encoding/json makes on the way).
// blocks itself is returned unchanged when no text is that long.
func shortenLongTexts(blocks []mcp.Content) ([]mcp.Content, int) {
	var out []mcp.Content
	hidden := 0
	for i, c := range blocks {
		t, ok := c.(*mcp.TextContent)
		if !ok || len(t.Text) <= 3*textKept {
			continue
		}
		if out == nil {
			out = slices.Clone(blocks)
		}
		head := runeStartAtOrAfter(t.Text, textKept)
		tail := runeStartAtOrBefore(t.Text, len(t.Text)-textKept)
		hidden += jsonTextLen(t.Text[head:tail])
		short := *t
		short.Text = t.Text[:head] + t.Text[tail:]
		out[i] = &short
	}
	if out == nil {
		return blocks, 0
	}
	return out, hidden
}

// jsonTextLen is how many bytes s takes inside a JSON string as
// marshalCompact writes it: encoding/json's escapes, less the HTML ones
// unescapeHTML undoes. s must not split a character.
func jsonTextLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			switch {
			case b == '"', b == '\\', b == '\b', b == '\f', b == '\n', b == '\r', b == '\t':
				n += 2
			case b < 0x20:
				n += 6 // \u00XX
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			n += 6 // \ufffd
		} else {
			n += size
		}
		i += size
	}
	return n
}

// mustMarshal is for values built here from strings and bools, which
// always marshal.
func mustMarshal(v any) json.RawMessage {
	b, err := marshalCompact(v)
	if err != nil {
		panic(fmt.Sprintf("execution: marshal %T: %v", v, err))
	}
	return b
}

// marshalCompact is json.Marshal without HTML escaping: the output goes to
// a model and an audit file, never into HTML, and "<image content
// omitted…>" must read as written. Content blocks marshal themselves with
// escaping, so the escapes are undone afterwards rather than avoided.
func marshalCompact(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return unescapeHTML(b), nil
}

// unescapeHTML rewrites the \u003c, \u003e, \u0026, \u2028 and \u2029
// escapes encoding/json adds into the characters themselves. It walks
// escape sequences pairwise, so an escaped backslash followed by "u003c"
// (the text `\u003c` in the original) is left alone.
func unescapeHTML(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u00`)) && !bytes.Contains(b, []byte(`\u202`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 >= len(b) {
			out = append(out, b[i])
			continue
		}
		if b[i+1] == 'u' && i+6 <= len(b) {
			switch string(b[i+2 : i+6]) {
			case "003c":
				out = append(out, '<')
				i += 5
				continue
			case "003e":
				out = append(out, '>')
				i += 5
				continue
			case "0026":
				out = append(out, '&')
				i += 5
				continue
			case "2028":
				out = append(out, "\u2028"...)
				i += 5
				continue
			case "2029":
				out = append(out, "\u2029"...)
				i += 5
				continue
			}
		}
		out = append(out, b[i], b[i+1])
		i++
	}
	return out
}
