package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
)

// MaxMessageBytes caps one message an upstream client sends: the body of
// one HTTP POST (answered HTTP 413 beyond it) and one line of stdio.
// Tool arguments are the only large thing a client sends; 4 MiB is
// go-sdk's own default and far above any argument a model writes.
const MaxMessageBytes = 4 << 20

// Bounds of what one call queues for its client while a round is not
// reading (a slow client, a 2026-07-28 client between rounds): beyond
// them the oldest entries are dropped and counted (see call.queueProgress).
const (
	maxQueuedProgress = 256
	maxQueuedLogs     = 256
)

// isInitialize reports whether body is one JSON-RPC initialize request:
// the only message that may open an HTTP session.
func isInitialize(body []byte) bool {
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		Method  string          `json:"method"`
		ID      json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return false
	}
	return m.JSONRPC == "2.0" && m.Method == "initialize" && len(m.ID) > 0 && !isNull(m.ID)
}

// readOpening reads the body of a POST that carries no session id, within
// MaxMessageBytes, and puts it back for go-sdk. ok is false when it
// answered the request itself (413, 400).
func readOpening(w http.ResponseWriter, r *http.Request) (body []byte, ok bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxMessageBytes))
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			tooLarge(w)
			return nil, false
		}
		http.Error(w, "Bad Request: reading the request body failed", http.StatusBadRequest)
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, true
}

func tooLarge(w http.ResponseWriter) {
	http.Error(w, fmt.Sprintf("Request Entity Too Large: toolgate serve accepts messages of at most %d bytes", MaxMessageBytes),
		http.StatusRequestEntityTooLarge)
}

// admit reserves a place for one more HTTP session within serve {
// max_sessions }; release gives back a reservation that did not become
// a handshaking session. ok is false, with the 503 written, when the
// gateway is full.
func (g *Gateway) admit(w http.ResponseWriter) (ok bool) {
	g.mu.Lock()
	limit := config.DefaultMaxSessions
	if n := g.host.Config().Serve.MaxSessions; n > 0 {
		limit = n
	}
	open := len(g.sessions) + len(g.handshaking) + g.reserved
	if open >= limit {
		g.mu.Unlock()
		g.warns.Warn(g.log, "refusing a new upstream session: max_sessions reached", "max_sessions", limit)
		w.Header().Set("Retry-After", strconv.Itoa(60))
		http.Error(w, fmt.Sprintf("Service Unavailable: toolgate serve already has %d sessions open, its limit (serve { max_sessions = %d }). "+
			"Close sessions you no longer use (HTTP DELETE, or quit the client), wait for idle ones to time out, or raise max_sessions",
			open, limit), http.StatusServiceUnavailable)
		return false
	}
	g.reserved++
	g.mu.Unlock()
	return true
}

func (g *Gateway) release() {
	g.mu.Lock()
	g.reserved--
	g.mu.Unlock()
}

// refuseInitialize keeps the placeholder from ever completing a
// handshake: an initialize that reaches it (in a batch, or in a form
// isInitialize does not accept) would otherwise leave a live go-sdk
// session with no tools, outside max_sessions.
func refuseInitialize(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "initialize" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
				Message: "toolgate: send initialize on its own (no batch), as a JSON-RPC 2.0 request with an id, in a POST without Mcp-Session-Id"}
		}
		return next(ctx, method, req)
	}
}
