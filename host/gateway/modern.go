package gateway

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/identity"
	"github.com/toolgate/toolgate/host/internal/slogbridge"
	"github.com/toolgate/toolgate/host/mcpclient"
)

// Clients of 2026-07-28 over HTTP.
//
// Under 2026-07-28 a request carries what initialize used to settle (the
// protocol version in the Mcp-Protocol-Version header and _meta, the
// client's name and capabilities in _meta) and there is no
// Mcp-Session-Id: each POST is answered on its own. go-sdk serves that
// only with a stateless handler (StreamableServerTransport answers
// SupportsProtocolVersion("2026-07-28") only when Stateless), which
// builds a go-sdk session for the length of one POST. What toolgate
// keeps between requests lives in its own session, as over stdio:
// approval memory, tools found by tool_search, calls waiting for their
// client to come back with input (requestState), subscriptions.
//
// Such a session is the one of a caller's client: requests of the same
// caller (serve { auth }, else anyone who may reach the endpoint) from a
// client of the same name and version share it, which is all the
// protocol lets a server tell apart. It ends after SessionTimeout
// without a request open, as an HTTP session does; a listen stream
// (subscriptions/listen) counts as open.
//
// Everything else is the stdio session's code: input goes to the client
// as input-required results (the call keeps running between rounds),
// list_changed and resources/updated reach the client on its listen
// stream through go-sdk's subscriptions, progress and log messages of a
// call go on the POST of the round serving it. Log messages outside any
// call have no stream to go on and are not sent.

// modernRequest reports whether r speaks 2026-07-28 or later: such
// requests go to the stateless handler, all others to the stateful one.
func modernRequest(r *http.Request) bool {
	return r.Header.Get("Mcp-Protocol-Version") >= mcpclient.ModernVersion
}

// byVersion sends each request to legacy or modern by its protocol
// version.
func byVersion(legacy, modern http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if modernRequest(r) {
			modern.ServeHTTP(w, r)
			return
		}
		legacy.ServeHTTP(w, r)
	})
}

// modernHandler is go-sdk's stateless Streamable HTTP handler, in front
// of which serveModern finds each request's toolgate session.
func (g *Gateway) modernHandler(e *Endpoint) http.Handler {
	sdk := mcp.NewStreamableHTTPHandler(g.serverFor, &mcp.StreamableHTTPOptions{
		Stateless:                  true,
		Logger:                     slogbridge.New(g.log.Named("http")),
		DisableLocalhostProtection: !e.Loopback,
		MaxRequestBodyBytes:        MaxMessageBytes,
		// The POST is the whole request under 2026-07-28: a client that
		// closes it cancels the request, and so the call.
		PropagateRequestCancellation: true,
	})
	return g.serveModern(sdk)
}

// modernMessage is what serveModern reads of a request body.
type modernMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Meta         map[string]json.RawMessage `json:"_meta"`
		RequestState string                     `json:"requestState"`
	} `json:"params"`
}

// modernClient returns the client a 2026-07-28 request names, and
// whether the request may open a session: a call (not a notification)
// whose _meta says 2026-07-28 or later. Anything else goes to go-sdk
// without a session, which answers it (an error saying what is
// missing) without building one.
func modernClient(body []byte) (*identity.Client, *modernMessage, bool) {
	var m modernMessage
	if err := json.Unmarshal(body, &m); err != nil || m.JSONRPC != "2.0" || m.Method == "" || len(m.ID) == 0 || isNull(m.ID) {
		return nil, nil, false
	}
	var version string
	if err := json.Unmarshal(m.Params.Meta[mcp.MetaKeyProtocolVersion], &version); err != nil || version < mcpclient.ModernVersion {
		return nil, nil, false
	}
	c := &identity.Client{}
	var info mcp.Implementation
	if raw, ok := m.Params.Meta[mcp.MetaKeyClientInfo]; ok && json.Unmarshal(raw, &info) == nil {
		c.Name, c.Version = info.Name, info.Version
	}
	return c, &m, true
}

// serveModern finds or opens the toolgate session of each 2026-07-28
// request and serves it with sdk, the stateless handler.
func (g *Gateway) serveModern(sdk http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			sdk.ServeHTTP(w, r) // 405: 2026-07-28 has no GET stream, no DELETE
			return
		}
		body, ok := readOpening(w, r)
		if !ok {
			return
		}
		client, m, opens := modernClient(body)
		if !opens {
			defer g.ops.track()()
			sdk.ServeHTTP(w, r) // the placeholder answers
			return
		}
		if g.ops.isDraining() && !(m.Method == "tools/call" && m.Params.RequestState != "") {
			// Without sessions, every request is as new as an
			// initialize: while draining only the rounds of calls in
			// flight are served; the client takes the rest to another
			// replica.
			// A JSON-RPC error, which a client reads as the answer to
			// this request alone.
			w.Header().Set("Retry-After", "1")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{
				"code": codeRefused, "message": "toolgate is shutting down: send the request again to reach another replica"}})
			return
		}
		if m.Method != "subscriptions/listen" {
			// Drain waits until the answer is written; a listen stream
			// is open for as long as the client listens, by design.
			defer g.ops.track()()
		}
		s := g.modernSession(w, r, client)
		if s == nil {
			return
		}
		defer s.idle.end()
		// The request ends with its session (idle, shutdown): a listen
		// stream would otherwise hold the connection open.
		ctx, cancel := context.WithCancel(context.WithValue(r.Context(), sessionKey{}, s))
		defer cancel()
		defer context.AfterFunc(s.ctx, cancel)()
		sdk.ServeHTTP(w, r.WithContext(ctx))
	})
}

// modernKey names the session of a caller's client.
func modernKey(caller *identity.Caller, client *identity.Client) string {
	return caller.Key() + "\x00" + client.Name + "\x00" + client.Version
}

// modernSession returns the live session of r's caller and client,
// opening one (within max_sessions) when there is none, with a request
// begun on its idle timer; the caller ends it. It returns nil with the
// answer written when no session can be opened.
func (g *Gateway) modernSession(w http.ResponseWriter, r *http.Request, client *identity.Client) *session {
	caller := identity.From(r.Context())
	key := modernKey(caller, client)
	// One request at a time may open a client's session: two first
	// requests at once must not open two.
	g.modernMu.Lock()
	defer g.modernMu.Unlock()
	g.mu.Lock()
	s := g.modern[key]
	g.mu.Unlock()
	if s != nil {
		s.idle.begin()
		if !s.ending() {
			return s
		}
		// Ended (idle, or closing) since: open another.
		s.idle.end()
	}
	if !g.admit(w) {
		return nil
	}
	s, err := g.newSession()
	if err != nil {
		g.release()
		w.Header().Set("Retry-After", "1")
		http.Error(w, "toolgate is shutting down: connect again to reach another replica", http.StatusServiceUnavailable)
		return nil
	}
	s.idle = newIdleTimer(g.opts.SessionTimeout, s.end)
	s.idle.begin()
	s.caller = caller
	s.modernKey = key
	s.clientInfo.Store(client)
	g.mu.Lock()
	g.reserved--
	registered := !g.closed
	if registered {
		g.sessions[s.id] = s
		if g.modern == nil {
			g.modern = map[string]*session{}
		}
		g.modern[key] = s
	}
	g.mu.Unlock()
	if !registered {
		s.idle.end()
		s.end()
		http.Error(w, "toolgate is shutting down", http.StatusServiceUnavailable)
		return nil
	}
	// The catalog may have changed since newSession.
	s.refresh()
	s.log.Info("upstream session started", "client", client.Name, "protocol", r.Header.Get("Mcp-Protocol-Version"), "transport", "http, stateless")
	return s
}

// ending reports whether the session is ending or ended.
func (s *session) ending() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}
