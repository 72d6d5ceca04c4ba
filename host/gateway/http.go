package gateway

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/identity"
	"github.com/toolgate/toolgate/host/inbox"
	"github.com/toolgate/toolgate/host/internal/slogbridge"
	"github.com/toolgate/toolgate/host/tokenauth"
)

// Path is where the Streamable HTTP endpoint is served.
const Path = "/mcp"

// ErrUnsafeListen is matched (errors.Is) by NewEndpoint's refusals: a
// listen address reachable from other machines without a bearer token,
// or a token variable that is not set. It is a configuration error; the
// text says what to change.
var ErrUnsafeListen = errors.New("unsafe gateway listener")

// Endpoint is a checked HTTP listen address with its access rules.
type Endpoint struct {
	// Network is "tcp", or "unix" for a socket path (see Listen).
	Network string
	// Addr is the host:port to bind, or the socket's absolute path.
	Addr string
	// Loopback is true when Addr is reachable from this machine only.
	// Then requests must name a local Host (and Origin, if any): that is
	// what defeats DNS rebinding from a browser page.
	Loopback bool
	// TokenEnvVar names the variable the bearer token came from; "" when
	// no token is required.
	TokenEnvVar string
	// Auth is serve's auth block: requests must carry an OAuth access
	// token it accepts; nil when none (see auth.go).
	Auth *config.Auth
	// tokenSum is the SHA-256 of the token; nil when none. Only the sum
	// is kept, so the token cannot reach a log through this value.
	tokenSum []byte
}

// NewEndpoint checks where the gateway may listen. addr overrides
// serve.listen when not empty; "unix:/path" is a unix socket (see
// Listen). A token is read from the variable serve.token_env_var names;
// when one is configured, every request must carry it (Authorization:
// Bearer), on loopback and sockets too. A non-loopback address without a
// token is refused.
func NewEndpoint(serve config.Serve, addr string, lookupEnv func(string) (string, bool)) (*Endpoint, error) {
	if addr == "" {
		addr = serve.Listen
	}
	if addr == "" {
		addr = config.DefaultListen
	}
	var e *Endpoint
	if strings.HasPrefix(addr, UnixPrefix) {
		var err error
		if e, err = unixEndpoint(addr); err != nil {
			return nil, err
		}
	} else {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("%w: listen address %q must be host:port, such as %q, or unix:/path/to/socket", ErrUnsafeListen, addr, config.DefaultListen)
		}
		e = &Endpoint{Network: "tcp", Addr: addr, Loopback: isLoopbackHost(host)}
	}
	e.TokenEnvVar = serve.TokenEnvVar
	e.Auth = serve.Auth
	if serve.TokenEnvVar != "" {
		token, _ := lookupEnv(serve.TokenEnvVar)
		// Blanks around a header value never reach us (HTTP strips
		// them), so blanks around the configured token cannot count:
		// a trailing newline or CR from a token file would lock
		// everyone out.
		token = strings.TrimSpace(token)
		if token == "" {
			return nil, fmt.Errorf("%w: the serve block sets token_env_var = %q, but $%s is empty or unset. "+
				"Export a long random token in it (for example: export %s=$(openssl rand -hex 32)), "+
				"or remove token_env_var to serve on 127.0.0.1 without a token",
				ErrUnsafeListen, serve.TokenEnvVar, serve.TokenEnvVar, serve.TokenEnvVar)
		}
		sum := sha256.Sum256([]byte(token))
		e.tokenSum = sum[:]
	}
	if !e.Loopback && e.tokenSum == nil && e.Auth == nil {
		return nil, fmt.Errorf("%w: refusing to serve on %s without a bearer token: anyone who can reach that address could run your tools. "+
			"Listen on 127.0.0.1 (the default), or add token_env_var = \"TOOLGATE_TOKEN\" to the serve block and export TOOLGATE_TOKEN",
			ErrUnsafeListen, addr)
	}
	return e, nil
}

// URL is where clients reach the endpoint once bound to addr (which
// carries the real port when the configured one was 0).
func URL(e *Endpoint, addr net.Addr) string {
	if e.Network == "unix" {
		// Any Host will do over the socket; clients need one in the URL.
		return "http://localhost" + Path
	}
	host, _, _ := net.SplitHostPort(e.Addr)
	_, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String() + Path
	}
	if host == "" {
		host = "0.0.0.0"
	}
	return "http://" + net.JoinHostPort(host, port) + Path
}

// RequiresToken reports whether requests must carry a bearer token (the
// static one, or an OAuth access token).
func (e *Endpoint) RequiresToken() bool { return e.tokenSum != nil || e.Auth != nil }

// isLoopbackHost reports whether a host (name or IP, no port) is this
// machine only.
func isLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// guard enforces the endpoint's access rules before go-sdk sees a
// request.
type guard struct {
	e    *Endpoint
	next http.Handler
	// selfAuth: next checks credentials itself (the approvals page).
	selfAuth bool
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A unix socket is out of a browser's reach: no DNS rebinding, so
	// any Host will do (clients make one up).
	if g.e.Loopback && g.e.Network != "unix" && !isLoopbackHost(hostOnly(r.Host)) {
		http.Error(w, fmt.Sprintf("Forbidden: Host %q is not this machine; toolgate serve only answers requests addressed to localhost", r.Host), http.StatusForbidden)
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" && !g.originAllowed(origin, r.Host) {
		http.Error(w, fmt.Sprintf("Forbidden: Origin %q may not call this toolgate gateway", origin), http.StatusForbidden)
		return
	}
	if g.e.tokenSum != nil && !g.selfAuth && !g.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="toolgate"`)
		http.Error(w, fmt.Sprintf("Unauthorized: send the token from $%s as Authorization: Bearer <token>", g.e.TokenEnvVar), http.StatusUnauthorized)
		return
	}
	g.next.ServeHTTP(w, r)
}

// originAllowed lets browsers call only from a local page or from the
// gateway's own origin.
func (g *guard) originAllowed(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return isLoopbackHost(u.Hostname()) || (!g.e.Loopback && strings.EqualFold(u.Host, host))
}

// authorized compares digests in constant time, so neither the token nor
// its length leaks through timing.
func (g *guard) authorized(r *http.Request) bool {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	return subtle.ConstantTimeCompare(sum[:], g.e.tokenSum) == 1
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// sessionKey carries the session a request opens or addresses, so
// that go-sdk's getServer returns its server (go-sdk asks more than once
// per request).
type sessionKey struct{}

// Handler returns the gateway's HTTP handler for e: the access guard in
// front of go-sdk's Streamable HTTP handlers at Path. Clients up to
// 2025-11-25 get stateful sessions, which are what let the gateway send
// requests to the client (approval forms, forwarded elicitations)
// during a call; 2026-07-28 clients, which ask for input in rounds and
// have no session, get go-sdk's stateless handler (modern.go).
func (g *Gateway) Handler(e *Endpoint) http.Handler {
	sdk := mcp.NewStreamableHTTPHandler(g.serverFor, &mcp.StreamableHTTPOptions{
		Logger: slogbridge.New(g.log.Named("http")),
		// The guard checks Host for loopback binds; beyond loopback the
		// token is the protection and clients use real host names.
		DisableLocalhostProtection: !e.Loopback,
		// No SessionTimeout: go-sdk's counts POSTs only, and would close
		// a client listening on its GET stream; see idleTimer.
		MaxRequestBodyBytes: MaxMessageBytes,
	})
	mux := http.NewServeMux()
	mux.Handle(Path, byVersion(g.opening(sdk), g.modernHandler(e)))
	api := &guard{e: e, next: g.newAuthGuard(e, mux)}
	if g.opts.Inbox == nil {
		return api
	}
	// The approvals page authenticates its approvers itself (a browser
	// sends no bearer header), behind the same Host and Origin checks.
	page := &guard{e: e, selfAuth: true, next: g.opts.Inbox.Handler(g.approverAuth(e))}
	top := http.NewServeMux()
	top.Handle("/", api)
	top.Handle(inbox.PagePath, page)
	top.Handle(inbox.PagePath+"/", page)
	return top
}

// approverAuth authenticates approvers with what the endpoint has: OAuth
// access tokens (serve { auth }), else its static token, else (loopback
// or a unix socket without a token) whoever can reach it.
func (g *Gateway) approverAuth(e *Endpoint) inbox.Authenticate {
	var v *tokenauth.Validator
	if e.Auth != nil {
		v = g.newValidator(e.Auth)
	}
	return func(ctx context.Context, token string) (inbox.Approver, error) {
		switch {
		case v != nil:
			c, err := v.Validate(ctx, token)
			if err != nil {
				return inbox.Approver{}, fmt.Errorf("an OAuth access token for %s is required: %w", e.Auth.Resource, err)
			}
			return inbox.Approver{Name: c.Subject, Caller: c}, nil
		case e.tokenSum != nil:
			sum := sha256.Sum256([]byte(token))
			if subtle.ConstantTimeCompare(sum[:], e.tokenSum) != 1 {
				return inbox.Approver{}, fmt.Errorf("send the token from $%s", e.TokenEnvVar)
			}
			return inbox.Approver{Name: "token holder"}, nil
		}
		return inbox.Approver{Name: "local user"}, nil
	}
}

// opening builds a session for each request that opens one (a POST
// without Mcp-Session-Id), and afterwards adopts the go-sdk session it
// produced, or drops it when the handshake failed.
func (g *Gateway) opening(sdk http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			// Drain waits until the answer is written.
			defer g.ops.track()()
		}
		if id := r.Header.Get("Mcp-Session-Id"); id != "" {
			if s := g.session(id); s != nil {
				if !sameCaller(s, r) {
					http.Error(w, "Forbidden: this session belongs to another caller; open a session of your own", http.StatusForbidden)
					return
				}
				if s.idle != nil {
					s.idle.begin()
					defer s.idle.end()
				}
				r = r.WithContext(context.WithValue(r.Context(), sessionKey{}, s))
			}
			sdk.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodPost {
			sdk.ServeHTTP(w, r)
			return
		}
		// Only an initialize opens a session (see limits.go): anything
		// else goes to go-sdk with the placeholder, which answers it
		// without building a session's server and step.
		body, ok := readOpening(w, r)
		if !ok {
			return
		}
		if !isInitialize(body) {
			sdk.ServeHTTP(w, r)
			return
		}
		if !g.admit(w) {
			return
		}
		s, err := g.newSession()
		if err != nil {
			g.release()
			// Retry-After lets a client behind a load balancer come back
			// to another replica.
			w.Header().Set("Retry-After", "1")
			http.Error(w, "toolgate is shutting down: connect again to reach another replica", http.StatusServiceUnavailable)
			return
		}
		// The client may send requests (its GET stream) with the new
		// session's id as soon as the answer is out, before bind: they
		// find the session, and its idle timer, among the handshaking.
		s.idle = newIdleTimer(g.opts.SessionTimeout, s.end)
		s.caller = identity.From(r.Context())
		g.mu.Lock()
		g.handshaking[s.id] = s
		g.reserved--
		g.mu.Unlock()
		sdk.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, s)))
		bound := false
		for ss := range s.server.Sessions() {
			s.bind(ss)
			bound = true
			break
		}
		g.mu.Lock()
		delete(g.handshaking, s.id)
		g.mu.Unlock()
		if !bound {
			s.end()
		}
	})
}

// idleTimer ends an HTTP session that has had no request open — a POST
// in flight or a GET event stream — for a while. go-sdk's own
// SessionTimeout counts POSTs only, so it would close a client that
// listens on its GET stream, the usual state of an idle IDE, whose next
// call then fails (go-sdk's client does not start a new session on 404).
//
// A request only counts itself in and out (begin, end); the timer is
// armed once and, when it fires, looks at what happened since and arms
// itself again for the rest of the idle time. Stopping and resetting it
// per request would add a timer to the runtime's heap on every call,
// which can wake the network poller's thread (issue 30).
type idleTimer struct {
	after  time.Duration
	expire func()
	timer  *time.Timer

	mu   sync.Mutex
	open int
	// last is when the session last had no request open.
	last time.Time
	// stopped: the session ended. A request still open then (the
	// DELETE that ended it, a GET stream) must not re-arm the timer,
	// which would hold the ended session for the whole timeout.
	stopped bool
}

func newIdleTimer(after time.Duration, expire func()) *idleTimer {
	t := &idleTimer{after: after, expire: expire, last: time.Now()}
	t.timer = time.AfterFunc(after, t.fire)
	return t
}

func (t *idleTimer) begin() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.open++
}

func (t *idleTimer) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.open--; t.open == 0 {
		t.last = time.Now()
	}
}

// fire ends the session when it has been idle for after; otherwise it
// looks again when it would have been.
func (t *idleTimer) fire() {
	t.mu.Lock()
	if t.stopped {
		t.mu.Unlock()
		return
	}
	next := t.after // a request is open: idle time starts when it ends
	if t.open == 0 {
		next = t.after - time.Since(t.last)
	}
	if next > 0 {
		t.timer.Reset(next)
		t.mu.Unlock()
		return
	}
	t.stopped = true
	t.mu.Unlock()
	t.expire()
}

func (t *idleTimer) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	t.timer.Stop()
}

// serverFor is go-sdk's getServer: the server of the session a request
// opens or addresses. An unknown session gets a server with no tools;
// go-sdk then answers 404 for it.
func (g *Gateway) serverFor(r *http.Request) *mcp.Server {
	if s, ok := r.Context().Value(sessionKey{}).(*session); ok {
		return s.server
	}
	return g.placeholder()
}

// placeholder is a server without tools for requests that address no
// live session. It declares what a session started now would (offered),
// so that a server/discover, which opens no session, describes the
// gateway as initialize will; it is built again when that changes.
func (g *Gateway) placeholder() *mcp.Server {
	off := g.offered()
	g.phMu.Lock()
	defer g.phMu.Unlock()
	if g.ph == nil || g.phOffers != off {
		g.ph = mcp.NewServer(g.impl, &mcp.ServerOptions{
			Logger:       slogbridge.NewChatty(g.log.Named("sdk")),
			Capabilities: off.capabilities(),
		})
		g.ph.AddReceivingMiddleware(refuseInitialize)
		g.phOffers = off
	}
	return g.ph
}

// ServeHTTP serves e's handler on ln until ctx ends, then ends every
// session and shuts the listener down. It returns nil after a shutdown
// that ctx asked for.
func (g *Gateway) ServeHTTP(ctx context.Context, ln net.Listener, e *Endpoint) error {
	srv := &http.Server{
		Handler:           g.Handler(e),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          nil,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve MCP over HTTP: %w", err)
	case <-ctx.Done():
		// SIGTERM: no new sessions, let calls in flight finish.
		g.drainFor()
	case <-g.ctx.Done():
	}
	// End sessions first: their open event streams would hold Shutdown.
	for _, s := range g.snapshot() {
		s.end()
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	<-errc
	return nil
}
