package mcpclient

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Progress notifications and log messages are delivered where the bytes
// are read, not by go-sdk's notification handlers. go-sdk hands
// notifications to a handler queue but retires responses at once, so a
// notification the server sent before its result can otherwise reach
// the host after the result: progress too late to forward to anyone, and
// a log message after its call has ended, when the gateway can no longer
// tell whose call it belonged to.
//
// On stdio our own connection reads them (stdioConn); on Streamable HTTP
// the event streams are watched (sseRouter): go-sdk type-asserts its HTTP
// connection for session handling, so that one must stay go-sdk's.

// readRouter routes the notifications whose order against results
// matters, on the connection's read path.
type readRouter struct {
	// log receives notifications/message. It is set once, before the
	// connection reads, and must not block.
	log func(*mcp.LoggingMessageParams)

	next atomic.Uint64
	m    sync.Map // progress token string → func(*mcp.ProgressNotificationParams)
}

// register routes the progress notifications of one call to f under the
// token it returns.
func (r *readRouter) register(f func(*mcp.ProgressNotificationParams)) string {
	token := "toolgate-" + strconv.FormatUint(r.next.Add(1), 10)
	r.m.Store(token, f)
	return token
}

func (r *readRouter) unregister(token string) { r.m.Delete(token) }

// routeData routes one encoded JSON-RPC message, or each message of a
// batch.
func (r *readRouter) routeData(data []byte) {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(data, &batch) == nil {
			for _, raw := range batch {
				r.routeData(raw)
			}
		}
		return
	}
	if msg, err := jsonrpc.DecodeMessage(data); err == nil {
		r.route(msg)
	}
}

// route delivers msg if it is a progress notification or a log message.
func (r *readRouter) route(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.IsCall() {
		return
	}
	switch req.Method {
	case "notifications/progress":
		var p mcp.ProgressNotificationParams
		if json.Unmarshal(req.Params, &p) != nil {
			return
		}
		token, ok := p.ProgressToken.(string)
		if !ok {
			return
		}
		if f, ok := r.m.Load(token); ok {
			f.(func(*mcp.ProgressNotificationParams))(&p)
		}
	case "notifications/message":
		var p mcp.LoggingMessageParams
		if r.log != nil && json.Unmarshal(req.Params, &p) == nil {
			r.log(&p)
		}
	}
}

// sseRouter watches an event-stream body as go-sdk reads it and routes
// each event when it is complete, which is before go-sdk can read any
// later event (the result).
type sseRouter struct {
	body   io.ReadCloser
	router *readRouter
	line   []byte // the current incomplete line
	data   []byte // data: lines of the current event
	// dropped is set when part of the current event was not buffered
	// (a large result): the event is not routed.
	dropped bool
}

func (s *sseRouter) Read(p []byte) (int, error) {
	n, err := s.body.Read(p)
	s.scan(p[:n])
	return n, err
}

func (s *sseRouter) Close() error { return s.body.Close() }

// Bounds on what is buffered of one event. Results, which go-sdk reads
// itself, are only buffered up to maxSSEEvent; a notification routed
// here may be as large as a stdio message.
const (
	maxSSEEvent  = 64 << 10
	maxSSENotice = maxStdioMessage
)

// isNotice reports whether the start of an event is one routed here.
func isNotice(b []byte) bool {
	b = b[:min(len(b), maxSSEEvent)]
	return bytes.Contains(b, []byte("notifications/progress")) || bytes.Contains(b, []byte("notifications/message"))
}

// keep appends chunk to the current line if the event may grow by it.
func (s *sseRouter) keep(chunk []byte) {
	if s.dropped {
		return
	}
	size := len(s.data) + len(s.line) + len(chunk)
	if size <= maxSSEEvent || size <= maxSSENotice && (isNotice(s.data) || isNotice(s.line) || isNotice(chunk)) {
		s.line = append(s.line, chunk...)
		return
	}
	s.dropped = true
}

func (s *sseRouter) scan(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			s.keep(b)
			return
		}
		s.keep(b[:i])
		b = b[i+1:]
		line := bytes.TrimSuffix(s.line, []byte("\r"))
		switch {
		case len(line) == 0: // end of event
			if !s.dropped && isNotice(s.data) {
				s.router.routeData(s.data)
			}
			s.data, s.dropped = s.data[:0], false
			if cap(s.data) > maxSSEEvent {
				s.data = nil // a large notification's buffer is not kept
			}
		case s.dropped:
		case bytes.HasPrefix(line, []byte("data:")):
			d := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
			if len(s.data) > 0 {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, d...)
		}
		s.line = s.line[:0]
		if cap(s.line) > maxSSEEvent {
			s.line = nil
		}
	}
}
