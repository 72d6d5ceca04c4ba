package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxStdioMessage bounds one newline-delimited message from a stdio server,
// as go-sdk's default does: a server past it is broken or hostile.
const maxStdioMessage = mcp.DefaultMaxLineLength

// stdioTransport speaks newline-delimited JSON-RPC over a launched
// process. It replaces go-sdk's IOTransport for one reason: speed. That
// transport reads on a goroutine of its own and hands every message over a
// channel to the reader of the connection — one extra goroutine hand-off
// per message, which on a small machine is most of a call's latency. A
// launch.Process unblocks its Read when closed, so the connection reads
// on its caller's goroutine. It also delivers progress notifications and
// log messages in order with results (see readRouter).
//
// One difference from go-sdk's connection: calls a server sends in a
// JSON-RPC batch (allowed before protocol 2025-06-18) are answered one
// line each rather than in one array. JSON-RPC says a batch SHOULD be
// answered as one; servers match responses by id either way, and servers
// calling their client in batches are not seen in practice.
type stdioTransport struct {
	rwc    io.ReadWriteCloser
	router *readRouter
	// secrets are values quoted errors must not show (the server's
	// credential-named environment variables).
	secrets []string
	// strays counts ignored stray messages (see isStrayResponse); nil
	// counts nowhere. log hears about the first one.
	strays *atomic.Int64
	log    hclog.Logger
	// readEnded, when set, is closed once reading ends (EOF, an error,
	// or Close), so whoever watches the process knows the pipe is done.
	readEnded chan struct{}
	// maxResult caps a tools/call answer (Options.MaxResultBytes); 0:
	// only maxStdioMessage.
	maxResult int
}

// toolsListMethod is the request whose answers are decoded tool by tool.
const toolsListMethod = "tools/list"

func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	return &stdioConn{
		rwc:       t.rwc,
		r:         bufio.NewReaderSize(t.rwc, 64<<10),
		router:    t.router,
		secrets:   t.secrets,
		strays:    t.strays,
		log:       t.log,
		readEnded: t.readEnded,
		maxResult: t.maxResult,
	}, nil
}

type stdioConn struct {
	rwc     io.ReadWriteCloser
	r       *bufio.Reader
	router  *readRouter
	secrets []string
	strays  *atomic.Int64
	log     hclog.Logger
	queue   []jsonrpc.Message // the rest of a batch; read side only

	readEnded     chan struct{} // see stdioTransport.readEnded
	readEndedOnce sync.Once

	// listing holds the ids of tools/list requests in flight, whose
	// answers keepWellFormedTools cleans before go-sdk decodes them.
	listing sync.Map // jsonrpc.ID → struct{}
	// calling holds the ids of tools/call requests in flight, whose
	// answers maxResult caps.
	calling   sync.Map // jsonrpc.ID → struct{}
	maxResult int

	wmu sync.Mutex // one message per Write, whole

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// Read returns the next message. It is called from one goroutine.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c.closed.Load() {
		return nil, io.EOF // nothing more is read once closed, queued or not
	}
	for {
		if len(c.queue) > 0 {
			msg := c.queue[0]
			c.queue = c.queue[1:]
			return msg, nil
		}
		line, err := c.readLine()
		var over *oversizedAnswer
		if errors.As(err, &over) {
			c.warn("refusing a tool result larger than max_result_bytes before decoding it; the call fails, the session stays up",
				"answer_bytes", over.size, "max_result_bytes", c.maxResult)
			resp := &jsonrpc.Response{ID: over.id, Error: &jsonrpc.Error{
				Code:    jsonrpc.CodeInternalError,
				Message: (&ResultTooLargeError{Bytes: over.size, Limit: c.maxResult}).Error(),
			}}
			c.router.route(resp)
			return resp, nil
		}
		if err != nil {
			c.endRead()
			return nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue // tolerate blank lines between messages
		}
		if line[0] == '[' {
			err := c.readBatch(line)
			if err == nil {
				continue // the batch's messages are queued (maybe none)
			}
			if !errors.Is(err, errNotABatch) {
				return nil, err
			}
		}
		// A line longer than the read buffer is a slice of its own
		// (readLongLine), which a response's result may keep.
		if len(line) > c.r.Size() && line[0] == '{' {
			if resp := decodeOwnedResponse(line); resp != nil {
				c.router.route(resp)
				c.cleanToolList(resp)
				c.answered(resp)
				return resp, nil
			}
		}
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			if isStrayResponse(line) {
				c.ignoreStray()
				continue
			}
			if tooDeep(line) {
				msg := c.deepMessage(ctx, line)
				if msg == nil {
					continue
				}
				return msg, nil
			}
			return nil, c.notJSONRPC(line)
		}
		c.router.route(msg)
		c.cleanToolList(msg)
		c.answered(msg)
		return msg, nil
	}
}

// answered forgets a tools/call once its answer arrived.
func (c *stdioConn) answered(msg jsonrpc.Message) {
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.ID.IsValid() {
		c.calling.Delete(resp.ID)
	}
}

// deepMessage handles a message go-sdk would refuse for its nesting
// alone, which would otherwise end the connection and cost the server
// every tool. An answer to tools/list keeps its tools that are not too
// deep (the others are skipped with a warning, like any malformed tool);
// any other answer becomes a JSON-RPC error for its request, so that
// call fails with the real reason and the session stays up. A request
// from the server is answered with an error; a notification is dropped.
// It returns nil when nothing is to be delivered.
func (c *stdioConn) deepMessage(ctx context.Context, line []byte) jsonrpc.Message {
	depth := jsonDepth(line)
	m, ok := readDeepMessage(line)
	switch {
	case !ok || m.method != "" && !m.id.IsValid():
		c.warn("dropping a message from the server that nests too deep", "depth", depth, "max_depth", maxMessageDepth)
		return nil
	case m.method != "":
		c.warn("refusing a request from the server that nests too deep", "method", m.method, "depth", depth, "max_depth", maxMessageDepth)
		_ = c.Write(ctx, &jsonrpc.Response{ID: m.id, Error: errTooDeep("request", depth)})
		return nil
	case !m.id.IsValid():
		return nil // a stray response: nobody waits for it
	}
	resp := &jsonrpc.Response{ID: m.id, Result: m.result}
	if _, listing := c.listing.Load(m.id); listing && !m.isErr {
		c.cleanToolList(resp)
		if jsonDepth(resp.Result)+1 <= maxMessageDepth {
			c.router.route(resp)
			return resp
		}
	}
	c.listing.Delete(m.id)
	c.calling.Delete(m.id)
	c.warn("failing a call whose answer nests too deep", "depth", depth, "max_depth", maxMessageDepth)
	resp = &jsonrpc.Response{ID: m.id, Error: errTooDeep("answer", depth)}
	c.router.route(resp)
	return resp
}

func (c *stdioConn) warn(msg string, kv ...any) {
	if c.log != nil {
		c.log.Warn(msg, kv...)
	}
}

// isStrayResponse reports whether data is a JSON-RPC 2.0 response that no
// request can own: "id": null (which JSON-RPC reserves for errors about a
// request whose id could not be read) or no id at all (a notification
// shaped like a response). go-sdk's decoder refuses both, which would end
// the connection; like any response to an id nobody sent, it is dropped.
func isStrayResponse(data []byte) bool {
	var m struct {
		Version string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &m) != nil || m.Version != "2.0" || m.Method != nil {
		return false
	}
	noID := m.ID == nil || string(m.ID) == "null"
	return noID && (m.Result != nil || m.Error != nil)
}

// ignoreStray counts one dropped stray response; the first one of a
// connection is worth a warning, later ones only a debug line.
func (c *stdioConn) ignoreStray() {
	n := int64(1)
	if c.strays != nil {
		n = c.strays.Add(1)
	}
	if c.log == nil {
		return
	}
	const msg = "ignoring a response without a usable id from the server (a JSON-RPC error in the server?)"
	if n == 1 {
		c.log.Warn(msg, "ignored_so_far", n)
	} else {
		c.log.Debug(msg, "ignored_so_far", n)
	}
}

// notJSONRPC is the error for a stdout line that is not a message: most
// often a server printing its logs to stdout. The decoder's own error is
// left out: it quotes the line unredacted.
func (c *stdioConn) notJSONRPC(line []byte) error {
	return fmt.Errorf("reading from the server: stdout line %q is %s; "+
		"a stdio server must write only MCP messages to stdout and its logs to stderr",
		linePreview(line, c.secrets), whatIsWrong(line))
}

// whatIsWrong says why data is not a JSON-RPC message, without quoting it.
func whatIsWrong(data []byte) string {
	if json.Valid(data) {
		return "JSON but not a JSON-RPC 2.0 message"
	}
	return "not a JSON-RPC message (not JSON)"
}

// readLine returns one line with its newline, valid until the next call.
// A line longer than the reader's buffer is returned in a slice of its
// own, which the caller may keep.
func (c *stdioConn) readLine() ([]byte, error) {
	line, err := c.r.ReadSlice('\n')
	if err == nil {
		return line, nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		if len(line) > 0 && errors.Is(err, io.EOF) {
			return line, nil // a last message without a newline
		}
		return nil, err
	}
	return c.readLongLine(line)
}

// readLongLine finishes a line that filled the reader's buffer (first).
// The pieces are kept as read and joined once at the end, into a slice
// of the exact size: appending to one slice would copy a 10 MiB message
// about eight times over while doubling, and leave up to twice its size
// allocated.
func (c *stdioConn) readLongLine(first []byte) ([]byte, error) {
	pieces := [][]byte{bytes.Clone(first)}
	size := len(first)
	capped := c.resultCap()
	for {
		line, err := c.r.ReadSlice('\n')
		if len(line) > 0 {
			pieces = append(pieces, bytes.Clone(line))
			size += len(line)
		}
		if capped > 0 && size > capped && !errors.Is(err, io.EOF) && (err == nil || errors.Is(err, bufio.ErrBufferFull)) {
			capped = 0 // decided once per line
			if err == nil {
				// The line ended in this piece: it is whole, and
				// refused the same way without reading further.
				if id, ok := headID(pieces[0]); ok {
					if _, calling := c.calling.LoadAndDelete(id); calling {
						return nil, &oversizedAnswer{id: id, size: int64(size - trailingNewline(pieces))}
					}
				}
			} else if rerr := c.refuseIfCall(pieces[0], size); rerr != nil {
				return nil, rerr
			}
		}
		// The limit is on the message; its newline (and a CR) are not.
		if size-trailingNewline(pieces) > maxStdioMessage {
			return nil, fmt.Errorf("reading from the server: a message exceeds %d bytes", maxStdioMessage)
		}
		switch {
		case err == nil, errors.Is(err, io.EOF):
			return bytes.Join(pieces, nil), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}

// trailingNewline is how many bytes of "\r\n" end the joined pieces.
func trailingNewline(pieces [][]byte) int {
	n := 0
	for i := len(pieces) - 1; i >= 0; i-- {
		p := pieces[i]
		trimmed := bytes.TrimRight(p, "\r\n")
		n += len(p) - len(trimmed)
		if len(trimmed) > 0 {
			break
		}
	}
	return n
}

// previewRunes bounds the part of a bad line an error quotes.
const previewRunes = 120

// linePreview is the part of a bad line an error quotes: short, and with
// the server's secrets and anything shaped like a credential redacted.
// Redaction runs over much more than is shown, so a secret that the cut
// would split is still recognized whole.
func linePreview(line []byte, secrets []string) string {
	const scan = 64 << 10
	text := redact(strings.ToValidUTF8(string(line[:min(len(line), scan)]), "\uFFFD"), secrets)
	if utf8.RuneCountInString(text) <= previewRunes && len(line) <= scan {
		return text
	}
	cut, n := 0, 0
	for cut < len(text) && n < previewRunes {
		_, size := utf8.DecodeRuneInString(text[cut:])
		cut += size
		n++
	}
	return text[:cut] + "…"
}

// errNotABatch says a line starting with '[' is not a JSON array at all
// (a log line such as "[INFO] started"), to be reported as such.
var errNotABatch = errors.New("not a batch")

// readBatch queues the messages of a JSON-RPC batch, leaving out stray
// responses.
func (c *stdioConn) readBatch(line []byte) error {
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		return errNotABatch
	}
	if len(raws) == 0 {
		return errors.New("reading from the server: an empty JSON-RPC batch")
	}
	for _, raw := range raws {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			if isStrayResponse(raw) {
				c.ignoreStray()
				continue
			}
			return fmt.Errorf("reading a batch from the server: element %q is %s",
				linePreview(raw, c.secrets), whatIsWrong(raw))
		}
		c.router.route(msg)
		c.cleanToolList(msg)
		c.queue = append(c.queue, msg)
	}
	return nil
}

// cleanToolList drops the malformed tools of an answer to tools/list.
func (c *stdioConn) cleanToolList(msg jsonrpc.Message) {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || !resp.ID.IsValid() {
		return
	}
	if _, ok := c.listing.LoadAndDelete(resp.ID); !ok || resp.Error != nil {
		return
	}
	resp.Result = keepWellFormedTools(resp.Result, func(index int, problem string) {
		if c.log != nil {
			c.log.Warn("skipping a tool the server listed: "+problem, "index_in_page", index)
		}
	})
}

// Write sends one message as one line. Concurrent writes do not
// interleave.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == toolsListMethod && req.IsCall() {
		c.listing.Store(req.ID, struct{}{})
		defer func() {
			if err != nil {
				c.listing.Delete(req.ID) // no answer will come
			}
		}()
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/call" && req.IsCall() && c.maxResult > 0 {
		c.calling.Store(req.ID, struct{}{})
		defer func() {
			if err != nil {
				c.calling.Delete(req.ID)
			}
		}()
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	data = append(data, '\n')
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.rwc.Write(data)
	return err
}

// Close ends the process's session (the launcher's shutdown order:
// stdin first, then signals). It unblocks a pending Read.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		c.closeErr = c.rwc.Close()
		c.endRead()
	})
	return c.closeErr
}

func (c *stdioConn) SessionID() string { return "" }

// endRead closes readEnded once.
func (c *stdioConn) endRead() {
	if c.readEnded != nil {
		c.readEndedOnce.Do(func() { close(c.readEnded) })
	}
}
