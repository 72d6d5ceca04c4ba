package mcpclient

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Progress notifications are delivered to the call's callback where the
// bytes are read, not by go-sdk's notification handler. go-sdk hands
// notifications to a handler queue but retires responses at once, so a
// progress notification the server sent before its result can otherwise
// reach the caller after the result — too late to forward to anyone.
//
// On stdio our own connection reads them (stdioConn); on Streamable HTTP
// the response body is watched (sseProgress): go-sdk type-asserts its HTTP
// connection for session handling, so that one must stay go-sdk's.

// deliverMessage routes one encoded JSON-RPC message if it is a progress
// notification.
func (r *progressRouter) deliverMessage(data []byte) {
	if msg, err := jsonrpc.DecodeMessage(data); err == nil {
		r.deliverIfProgress(msg)
	}
}

// deliverIfProgress routes msg if it is a progress notification.
func (r *progressRouter) deliverIfProgress(msg jsonrpc.Message) {
	if req, ok := msg.(*jsonrpc.Request); ok && !req.IsCall() && req.Method == "notifications/progress" {
		var p mcp.ProgressNotificationParams
		if json.Unmarshal(req.Params, &p) == nil {
			r.deliver(&p)
		}
	}
}

// sseProgress watches an event-stream body as go-sdk reads it and routes
// progress notifications when their event is complete, which is before
// go-sdk can read any later event (the result).
type sseProgress struct {
	body   io.ReadCloser
	router *progressRouter
	line   []byte // the current incomplete line
	data   []byte // data: lines of the current event
}

func (s *sseProgress) Read(p []byte) (int, error) {
	n, err := s.body.Read(p)
	s.scan(p[:n])
	return n, err
}

func (s *sseProgress) Close() error { return s.body.Close() }

// maxSSEEvent bounds what is buffered for sniffing; larger events are
// results, never progress notifications.
const maxSSEEvent = 64 << 10

func (s *sseProgress) scan(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if len(s.line)+len(b) <= maxSSEEvent {
				s.line = append(s.line, b...)
			}
			return
		}
		if len(s.line)+i <= maxSSEEvent {
			s.line = append(s.line, b[:i]...)
		}
		b = b[i+1:]
		line := bytes.TrimSuffix(s.line, []byte("\r"))
		switch {
		case len(line) == 0: // end of event
			if len(s.data) > 0 && bytes.Contains(s.data, []byte("notifications/progress")) {
				s.router.deliverMessage(s.data)
			}
			s.data = s.data[:0]
		case bytes.HasPrefix(line, []byte("data:")):
			d := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
			if len(s.data)+len(d) <= maxSSEEvent {
				if len(s.data) > 0 {
					s.data = append(s.data, '\n')
				}
				s.data = append(s.data, d...)
			}
		}
		s.line = s.line[:0]
	}
}
