package mcpclient

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// eventGuard is the event-stream side of what classify does to a JSON
// body: go-sdk decodes each server-sent event as soon as it has read it,
// so the checks happen here, below it, one whole event at a time:
//   - the answer to a capped tools/call whose event grows past
//     max_result_bytes is refused before it is decoded: its bytes are
//     counted, not kept, and go-sdk reads an error response for the call
//     (the text of [ResultTooLargeError]) instead;
//   - a message nested deeper than go-sdk decodes (which would end the
//     session) fails only its call; a too-deep notification or request
//     from the server is dropped with a warning;
//   - a tools/list answer has its malformed or too-deep tools left out.
//
// What go-sdk reads stays valid SSE: an event passes through verbatim, or
// is replaced by one with the same id: and event: lines (the id keeps
// resumption working) and the new data. An event larger than what is
// checked (go-sdk's own per-event bound, or the cap) streams through
// unchecked, as a JSON body too large to check does.
type eventGuard struct {
	body io.ReadCloser
	r    *bufio.Reader
	t    *headerTransport
	// method is the request this stream answers ("" for the GET stream);
	// call its id when its answer is capped (a tools/call with
	// max_result_bytes), else invalid.
	method string
	call   jsonrpc.ID

	out [][]byte // what Read hands go-sdk next
	err error    // the body's error, returned once out is empty

	ev      sseEvent
	midLine bool // the last fragment read did not end its line
	lineIs  lineKind
}

type lineKind int

const (
	otherLine lineKind = iota
	dataLine
	fieldLine // id: or event:, kept for a replacement event
)

type guardMode int

const (
	buffering guardMode = iota // kept until the event ends, then checked
	passing                    // too large to check: streams through
	refusing                   // a capped answer past the cap: counted, dropped
)

// sseEvent is what the guard holds of the event being read.
type sseEvent struct {
	mode   guardMode
	raw    []byte // the event's lines as read (buffering)
	size   int64  // bytes read of the event
	data   int64  // bytes of its data: lines
	fields []byte // its id: and event: lines
	head   []byte // the start of its data, where the response id is
	depth  depthScan
}

// maxEventFields bounds the id: and event: lines kept for a replacement.
const maxEventFields = 4 << 10

func newEventGuard(t *headerTransport, body io.ReadCloser, msg message) *eventGuard {
	g := &eventGuard{body: body, r: bufio.NewReaderSize(body, 64<<10), t: t, method: msg.Method}
	if msg.Method == "tools/call" && t.maxResult > 0 {
		var raw any
		if json.Unmarshal(msg.ID, &raw) == nil {
			if id, err := jsonrpc.MakeID(raw); err == nil {
				g.call = id
			}
		}
	}
	return g
}

func (g *eventGuard) Close() error { return g.body.Close() }

func (g *eventGuard) Read(p []byte) (int, error) {
	for len(g.out) == 0 && g.err == nil {
		g.err = g.step()
	}
	if len(g.out) == 0 {
		return 0, g.err
	}
	n := copy(p, g.out[0])
	if g.out[0] = g.out[0][n:]; len(g.out[0]) == 0 {
		g.out = g.out[1:]
	}
	return n, nil
}

// step reads one line, or one buffer's worth of a long line. A fragment
// queued in out points into the bufio buffer: Read empties out before it
// calls step again.
func (g *eventGuard) step() error {
	frag, err := g.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		err = nil
	}
	if len(frag) > 0 {
		g.fragment(frag)
	}
	if err == nil && g.ev.mode == refusing && g.ev.size > maxDiscardedAnswer {
		// As on stdio: an answer this long ends the connection.
		err = fmt.Errorf("reading from the server: an event exceeds %d bytes", maxDiscardedAnswer)
	}
	if err != nil {
		if g.ev.size > 0 {
			g.endEvent() // go-sdk reads a last event without its blank line too
		}
		return err
	}
	return nil
}

func (g *eventGuard) fragment(frag []byte) {
	ends := frag[len(frag)-1] == '\n'
	first := !g.midLine
	g.midLine = !ends
	if first && ends && len(bytes.TrimRight(frag, "\r\n")) == 0 {
		g.add(frag)
		g.endEvent()
		return
	}
	content := frag
	if first {
		key, value, found := bytes.Cut(frag, []byte{':'})
		switch {
		case found && string(key) == "data":
			g.lineIs, content = dataLine, value
		case found && (string(key) == "id" || string(key) == "event"):
			g.lineIs = fieldLine
		default:
			g.lineIs = otherLine
		}
	}
	switch g.lineIs {
	case dataLine:
		g.ev.depth.feed(content)
		g.ev.data += int64(len(bytes.TrimRight(content, "\r\n")))
		if room := maxSSEEvent - len(g.ev.head); room > 0 {
			g.ev.head = append(g.ev.head, content[:min(room, len(content))]...)
		}
	case fieldLine:
		if len(g.ev.fields)+len(frag) <= maxEventFields {
			g.ev.fields = append(g.ev.fields, frag...)
		}
	}
	g.add(frag)
}

// add takes one fragment of the current event as its mode says.
func (g *eventGuard) add(frag []byte) {
	ev := &g.ev
	ev.size += int64(len(frag))
	switch ev.mode {
	case passing:
		g.out = append(g.out, frag)
		return
	case refusing:
		return
	}
	ev.raw = g.grow(ev.raw, len(frag))
	ev.raw = append(ev.raw, frag...)
	if g.call.IsValid() && ev.size > int64(g.t.maxResult+envelopeSlack) {
		if id, ok := headID(ev.head); ok && id == g.call {
			ev.mode, ev.raw = refusing, nil // refused before decoding
			return
		}
	}
	if ev.size > int64(g.checkLimit()) {
		ev.mode = passing
		g.out = append(g.out, ev.raw)
		ev.raw = nil
	}
}

// grow makes room for n more bytes in raw, doubling: append's own growth
// (a quarter at a time for large slices) would leave about five times an
// event's size in garbage behind it, which is what peak memory for a
// refused answer counts. It never makes room past where the event is
// refused or passed on (one read more than the limit).
func (g *eventGuard) grow(raw []byte, n int) []byte {
	need := len(raw) + n
	if need <= cap(raw) {
		return raw
	}
	limit := g.checkLimit()
	if g.call.IsValid() {
		limit = g.t.maxResult + envelopeSlack
	}
	grown := make([]byte, len(raw), max(need, min(2*cap(raw), limit+g.r.Size()), 4<<10))
	copy(grown, raw)
	return grown
}

// checkLimit is the largest event held to be checked: go-sdk refuses a
// larger one itself.
func (g *eventGuard) checkLimit() int { return maxEventSize(g.t.maxResult) }

// maxEventSize is the per-event bound given to go-sdk: its default, or
// more when max_result_bytes allows a larger answer.
func maxEventSize(maxResult int) int {
	return max(mcp.DefaultMaxEventSize, maxResult+envelopeSlack+maxEventFields)
}

// endEvent hands go-sdk the event just read, checked, and starts the next.
func (g *eventGuard) endEvent() {
	ev := g.ev
	g.ev = sseEvent{}
	switch ev.mode {
	case passing:
		return
	case refusing:
		size := ev.data
		g.t.warns.Warn(g.t.log, "refusing a tool result larger than max_result_bytes before decoding it; the call fails, the session stays up",
			"answer_bytes", size, "max_result_bytes", g.t.maxResult)
		g.replace(ev, g.call, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: (&ResultTooLargeError{Bytes: size, Limit: g.t.maxResult}).Error()})
		return
	}
	if depth := ev.depth.deepest; depth > maxMessageDepth {
		m, ok := readDeepMessage(eventData(ev.raw))
		if ok && m.method == "" && m.id.IsValid() {
			g.t.warns.Warn(g.t.log, "failing a call whose answer nests too deep", "method", g.method, "depth", depth, "max_depth", maxMessageDepth)
			g.replace(ev, m.id, errTooDeep("answer", depth))
			return
		}
		// go-sdk would end the session on it; nobody waits for it but
		// the server, for a request, which cannot be answered from here.
		g.t.warns.Warn(g.t.log, "dropping a message from the server that nests too deep", "method", m.method, "depth", depth, "max_depth", maxMessageDepth)
		if len(ev.fields) > 0 {
			g.out = append(g.out, ev.fields, []byte("\n"))
		}
		return
	}
	if g.method == toolsListMethod {
		if clean := g.t.cleanToolList(eventData(ev.raw)); clean != nil {
			g.out = append(g.out, ev.fields, []byte("data: "), clean, []byte("\n\n"))
			return
		}
	}
	g.out = append(g.out, ev.raw)
}

// replace hands go-sdk an error response for id in place of ev.
func (g *eventGuard) replace(ev sseEvent, id jsonrpc.ID, rpcErr *jsonrpc.Error) {
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: rpcErr})
	if err != nil { // an id MakeID accepted always encodes
		data = []byte(`{"jsonrpc":"2.0","error":{"code":-32603,"message":"toolgate could not encode an error"}}`)
	}
	g.out = append(g.out, ev.fields, []byte("data: "), data, []byte("\n\n"))
}

// eventData joins the data: lines of a raw event, as go-sdk does.
func eventData(raw []byte) []byte {
	var data []byte
	seen := false
	for line := range bytes.Lines(raw) {
		key, value, found := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte{':'})
		if !found || string(key) != "data" {
			continue
		}
		if seen {
			data = append(data, '\n')
		}
		seen = true
		data = append(data, bytes.TrimSpace(value)...)
	}
	return data
}

// depthScan is jsonDepth fed in pieces: how deeply the data read so far
// nests objects and arrays.
type depthScan struct {
	depth, deepest    int
	inString, escaped bool
}

func (d *depthScan) feed(b []byte) {
	for _, c := range b {
		if d.inString {
			switch {
			case d.escaped:
				d.escaped = false
			case c == '\\':
				d.escaped = true
			case c == '"':
				d.inString = false
			}
			continue
		}
		switch c {
		case '"':
			d.inString = true
		case '{', '[':
			d.depth++
			d.deepest = max(d.deepest, d.depth)
		case '}', ']':
			d.depth--
		}
	}
}
