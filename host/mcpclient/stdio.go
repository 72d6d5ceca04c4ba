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
	"unicode/utf8"

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
// on its caller's goroutine. It also delivers progress notifications in
// order (see progressRouter).
type stdioTransport struct {
	rwc    io.ReadWriteCloser
	router *progressRouter
}

func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	return &stdioConn{
		rwc:    t.rwc,
		r:      bufio.NewReaderSize(t.rwc, 64<<10),
		router: t.router,
	}, nil
}

type stdioConn struct {
	rwc    io.ReadWriteCloser
	r      *bufio.Reader
	router *progressRouter
	queue  []jsonrpc.Message // the rest of a batch; read side only

	wmu sync.Mutex // one message per Write, whole

	closeOnce sync.Once
	closeErr  error
}

// Read returns the next message. It is called from one goroutine.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		msg := c.queue[0]
		c.queue = c.queue[1:]
		return msg, nil
	}
	for {
		line, err := c.readLine()
		if err != nil {
			return nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue // tolerate blank lines between messages
		}
		if line[0] == '[' {
			return c.readBatch(line)
		}
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			return nil, fmt.Errorf("reading from the server: stdout line %q is not a JSON-RPC message (%w); a stdio server must write only MCP messages to stdout and its logs to stderr", linePreview(line), err)
		}
		c.router.deliverIfProgress(msg)
		return msg, nil
	}
}

// readLine returns one line without its newline, valid until the next
// call. A line longer than the reader's buffer is assembled in a new slice.
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
	long := append([]byte(nil), line...)
	for {
		line, err = c.r.ReadSlice('\n')
		long = append(long, line...)
		if len(long) > maxStdioMessage {
			return nil, fmt.Errorf("reading from the server: a message exceeds %d bytes", maxStdioMessage)
		}
		switch {
		case err == nil:
			return long, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(long) > 0:
			return long, nil
		default:
			return nil, err
		}
	}
}

// linePreview is the part of a bad line an error quotes: short, and with
// anything shaped like a credential redacted.
func linePreview(line []byte) string {
	const max = 120
	text := redact(strings.ToValidUTF8(string(line[:min(len(line), max+64)]), "\uFFFD"), nil)
	if len(text) > max || len(line) > max+64 {
		cut := min(len(text), max)
		for cut > 0 && cut < len(text) && !utf8.RuneStart(text[cut]) {
			cut--
		}
		return text[:cut] + "…"
	}
	return text
}

func (c *stdioConn) readBatch(line []byte) (jsonrpc.Message, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		return nil, fmt.Errorf("reading a batch from the server: %w", err)
	}
	if len(raws) == 0 {
		return nil, errors.New("reading from the server: an empty batch")
	}
	for _, raw := range raws {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return nil, fmt.Errorf("reading a batch from the server: %w", err)
		}
		c.router.deliverIfProgress(msg)
		c.queue = append(c.queue, msg)
	}
	msg := c.queue[0]
	c.queue = c.queue[1:]
	return msg, nil
}

// Write sends one message as one line.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
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
	c.closeOnce.Do(func() { c.closeErr = c.rwc.Close() })
	return c.closeErr
}

func (c *stdioConn) SessionID() string { return "" }
