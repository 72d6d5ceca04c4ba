package mcpclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/toolgate/toolgate/host/internal/warnlimit"
	"github.com/toolgate/toolgate/host/version"
	"github.com/toolgate/toolgate/internal/backoff"
)

// RetryPolicy says how the Streamable HTTP handshake (initialize,
// notifications/initialized, server/discover) and tools/list are retried
// on network errors and HTTP 408/429/500/502/503/504. Nothing else is ever
// retried: a tools/call may have side effects. The pauses are capped
// exponential backoff with jitter (internal/backoff). Every attempt stays
// inside the request's deadline: a pause that would outlast it is not
// taken.
type RetryPolicy struct {
	// Attempts bounds the tries of one request, the first included; 0
	// means [DefaultRetryAttempts], 1 disables retries.
	Attempts int
	// Initial is the pause before the second attempt; 0 means
	// [DefaultRetryInitial]. Each further pause doubles, up to Max.
	Initial time.Duration
	// Max caps the pauses; 0 means [DefaultRetryMax].
	Max time.Duration

	// random picks the jitter; nil means math/rand. Tests fix it to run
	// the schedule on synctest's clock.
	random func() float64
}

// The retry defaults: three attempts, the second after about 250 ms, the
// third about 500 ms later.
const (
	DefaultRetryAttempts = 3
	DefaultRetryInitial  = 250 * time.Millisecond
	DefaultRetryMax      = time.Second
)

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.Attempts <= 0 {
		p.Attempts = DefaultRetryAttempts
	}
	if p.Initial <= 0 {
		p.Initial = DefaultRetryInitial
	}
	if p.Max <= 0 {
		p.Max = DefaultRetryMax
	}
	return p
}

func (p RetryPolicy) backoff() backoff.Policy {
	return backoff.Policy{Initial: p.Initial, Max: p.Max, Rand: p.random}
}

// retriedMethods are the requests whose failure a retry can fix without
// risk: they change nothing on the server.
var retriedMethods = map[string]bool{
	"initialize":                true,
	"notifications/initialized": true,
	"server/discover":           true,
	"tools/list":                true,
}

// retriedStatus are the HTTP statuses of a server or gateway that is
// briefly unable to answer.
func retriedStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

func (c *Client) httpTransport() (mcp.Transport, *headerTransport) {
	h := c.opts.HTTP
	base := http.DefaultTransport
	if h.Client != nil && h.Client.Transport != nil {
		base = h.Client.Transport
	}
	t := &headerTransport{
		origin:    endpointOrigin(h.URL),
		base:      base,
		header:    h.Header,
		router:    &c.router,
		retry:     h.Retry.withDefaults(),
		log:       c.log.Named("http"),
		secrets:   &c.secrets,
		maxResult: c.opts.MaxResultBytes,
		warns:     c.warns,
	}
	var handler auth.OAuthHandler
	if h.OAuth != nil {
		t.oauth = true
		handler = &oauthAdapter{inner: h.OAuth, transport: t}
	}
	hc := &http.Client{Transport: t, CheckRedirect: redirectPolicy(nil)}
	if h.Client != nil {
		// Keep the caller's redirect policy (behind ours) and jar; never
		// a Timeout, which would cut the long-lived SSE stream.
		hc.CheckRedirect, hc.Jar = redirectPolicy(h.Client.CheckRedirect), h.Client.Jar
	}
	return &mcp.StreamableClientTransport{
		Endpoint:     h.URL,
		HTTPClient:   hc,
		OAuthHandler: handler,
		// An answer under max_result_bytes is not refused for its size.
		MaxEventSize: maxEventSize(c.opts.MaxResultBytes),
	}, t
}

// headerTransport is everything the host adds below go-sdk's Streamable
// HTTP transport, which has no header option and reports failures as bare
// status texts:
//   - the server block's static headers and a User-Agent;
//   - retries of the handshake and tools/list (see RetryPolicy);
//   - the status mapping: a POST answer the host cannot use becomes a
//     typed error ([AuthError], [HTTPError], [ErrSessionExpired]) with a
//     bounded, redacted body preview. Returned from RoundTrip, go-sdk
//     treats it as a request that never reached the server, so the
//     session survives it;
//   - progress notifications sniffed off event streams.
//
// GET (the server's event stream) and DELETE pass through unchanged:
// go-sdk already handles every answer to those.
type headerTransport struct {
	// origin is the endpoint's (see origin): the static headers go to
	// it only, whatever redirect or caller policy lets a request through.
	origin string
	base   http.RoundTripper
	header http.Header
	router *readRouter
	retry  RetryPolicy
	log    hclog.Logger
	// secrets learns the credentials go-sdk's OAuth handler adds.
	secrets *Secrets
	// maxResult caps the answer to a tools/call, a JSON body or an event
	// (Options.MaxResultBytes).
	maxResult int
	// warns rate-limits the warnings one answer may cause.
	warns *warnlimit.Limiter
	// oauth: 401 and 403 go to go-sdk's OAuth hook as responses, once
	// per request (see oauthAdapter).
	oauth bool
	// authorized holds the body digests of requests whose 401/403 was
	// just handed to the OAuth handler: the repeat answer to the same
	// request is an error, not a second authorization.
	authorized sync.Map // [32]byte → struct{}
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if origin(r.URL) == t.origin {
		for k, vs := range t.header {
			r.Header[k] = append([]string(nil), vs...)
		}
	} else {
		// redirectPolicy stops such requests first; this keeps the
		// credentials home should a caller's transport send one anyway.
		r.Header.Del("Authorization")
		for k := range t.header {
			r.Header.Del(k)
		}
	}
	if r.Header.Get("User-Agent") == "" {
		r.Header.Set("User-Agent", "toolgate/"+version.Toolgate)
	}
	if t.secrets != nil {
		t.secrets.addFromHeader(r.Header)
	}
	if r.Method != http.MethodPost {
		resp, err := t.base.RoundTrip(r)
		if err == nil {
			t.routeEvents(resp, message{})
		}
		return resp, err
	}

	body, err := requestBody(r)
	if err != nil {
		return nil, err
	}
	msg := peekMessage(body)
	attempts := 1
	if retriedMethods[msg.Method] {
		attempts = t.retry.Attempts
	}
	ctx := r.Context()
	var resp *http.Response
	n := 0
	for {
		n++
		r.Body = io.NopCloser(bytes.NewReader(body))
		resp, err = t.base.RoundTrip(r)
		if n >= attempts || !t.worthRetrying(ctx, resp, err) {
			break
		}
		delay := t.retry.backoff().Delay(n)
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) <= delay {
			break // the next attempt could not finish in time
		}
		t.log.Debug("retrying", "method", msg.Method, "attempt", n+1, "after", delay, "reason", retryReason(resp, err))
		discard(resp)
		if err := backoff.Sleep(ctx, delay); err != nil {
			return nil, err
		}
	}
	if err != nil {
		if n > 1 {
			err = fmt.Errorf("%w (%d attempts)", err, n)
		}
		return nil, err
	}
	return t.classify(r, body, msg, resp, n)
}

func (t *headerTransport) worthRetrying(ctx context.Context, resp *http.Response, err error) bool {
	if err != nil {
		return ctx.Err() == nil
	}
	return retriedStatus(resp.StatusCode)
}

func retryReason(resp *http.Response, err error) string {
	if err != nil {
		return err.Error()
	}
	return resp.Status
}

// classify maps one final POST answer: a usable response goes back to
// go-sdk, anything else becomes the error the caller sees.
func (t *headerTransport) classify(r *http.Request, body []byte, msg message, resp *http.Response, attempts int) (*http.Response, error) {
	code := resp.StatusCode
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		if t.oauth {
			if _, again := t.authorized.LoadAndDelete(digest(body)); !again {
				return resp, nil // go-sdk asks the OAuth handler, then retries once
			}
		}
		e := authErrorFrom(resp)
		if code == http.StatusForbidden && e.Scope == "" || code == http.StatusUnauthorized && !e.Challenge {
			return nil, t.httpError(r, resp, "", attempts)
		}
		discard(resp)
		return nil, e
	case code == http.StatusNotFound && r.Header.Get(sessionIDHeader) != "":
		discard(resp)
		return nil, ErrSessionExpired
	case isRedirect(code) && resp.Header.Get("Location") != "":
		// http.Client follows it, or not, by redirectPolicy.
		return resp, nil
	case code < 200 || code >= 300:
		// A JSON-RPC error body is the server's own answer: go-sdk
		// surfaces it as the request's error.
		buf, ok := readBounded(resp, maxBufferedBody)
		restoreBody(resp, buf, ok)
		if rpcErr := jsonRPCError(buf); ok && rpcErr != nil {
			// The server's own answer. Returned here because go-sdk
			// drops the body of 5xx and 429 answers.
			_ = resp.Body.Close()
			return nil, &serverAnswer{rpcErr}
		}
		return nil, t.httpError(r, resp, "", attempts)
	}
	if t.oauth {
		t.authorized.Delete(digest(body))
	}
	if !msg.isCall() || code == http.StatusAccepted || code == http.StatusNoContent {
		return resp, nil // go-sdk reads no body for notifications and responses
	}
	switch mediaType(resp) {
	case "text/event-stream":
		t.routeEvents(resp, msg)
		return resp, nil
	case "application/json":
		limit := int64(maxBufferedBody)
		capped := msg.Method == "tools/call" && t.maxResult > 0
		if capped {
			limit = int64(t.maxResult + envelopeSlack)
		}
		buf, ok := readBounded(resp, limit)
		if !ok && capped {
			// Refused before decoding: what was read is dropped, the
			// rest is counted without being kept.
			rest, _ := io.Copy(io.Discard, io.LimitReader(resp.Body, maxDiscardedAnswer))
			_ = resp.Body.Close()
			size := int64(len(buf)) + rest
			t.warns.Warn(t.log, "refusing a tool result larger than max_result_bytes before decoding it; the call fails, the session stays up",
				"answer_bytes", size, "max_result_bytes", t.maxResult)
			return nil, &serverAnswer{&jsonrpc.Error{Code: jsonrpc.CodeInternalError,
				Message: (&ResultTooLargeError{Bytes: size, Limit: t.maxResult}).Error()}}
		}
		restoreBody(resp, buf, ok)
		if !ok {
			return resp, nil // too large to check here: go-sdk's decoder decides
		}
		if !json.Valid(buf) {
			return nil, t.httpError(r, resp, problemInvalidJSON, attempts)
		}
		if t.router != nil && bytes.HasPrefix(bytes.TrimSpace(buf), []byte("[")) {
			// A batch answer (before 2025-06-18) may carry notifications.
			t.router.routeData(buf)
		}
		if msg.Method == toolsListMethod {
			if clean := t.cleanToolList(buf); clean != nil {
				buf = clean
				resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(buf)), int64(len(buf))
			}
		}
		if depth := jsonDepth(buf); depth > maxMessageDepth {
			// go-sdk would fail the whole session on it; fail the call.
			t.warns.Warn(t.log, "failing a call whose answer nests too deep", "method", msg.Method, "depth", depth, "max_depth", maxMessageDepth)
			return nil, &serverAnswer{errTooDeep("answer", depth)}
		}
		return resp, nil
	}
	return nil, t.httpError(r, resp, problemContentType, attempts)
}

func (t *headerTransport) httpError(r *http.Request, resp *http.Response, problem string, attempts int) error {
	defer resp.Body.Close()
	return &HTTPError{
		Status:      resp.StatusCode,
		ContentType: resp.Header.Get("Content-Type"),
		Problem:     problem,
		Body:        bodyPreview(resp.Body, requestSecrets(r.Header)),
		Attempts:    attempts,
	}
}

// routeEvents has resp's event stream checked (eventGuard: the answer
// to msg, if any, is capped) and routed (sseRouter) as go-sdk reads it.
func (t *headerTransport) routeEvents(resp *http.Response, msg message) {
	if mediaType(resp) != "text/event-stream" {
		return
	}
	resp.Body = newEventGuard(t, resp.Body, msg)
	if t.router != nil {
		resp.Body = &sseRouter{body: resp.Body, router: t.router}
	}
}

const sessionIDHeader = "Mcp-Session-Id"

// maxBufferedBody bounds what classify reads to check a JSON answer or
// find a JSON-RPC error; larger bodies stream through unchecked.
const maxBufferedBody = 64 << 20

// readBounded reads up to limit bytes of resp's body. ok is false when the
// body is longer; the caller then owns the rest in resp.Body.
func readBounded(resp *http.Response, limit int64) (buf []byte, ok bool) {
	buf, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return buf, true // a truncated body: judged as what arrived
	}
	if int64(len(buf)) > limit {
		return buf, false
	}
	_ = resp.Body.Close()
	return buf, true
}

// restoreBody puts what readBounded took back in front of the rest.
func restoreBody(resp *http.Response, buf []byte, complete bool) {
	if complete {
		resp.Body = io.NopCloser(bytes.NewReader(buf))
		return
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(buf), resp.Body), resp.Body}
}

func discard(resp *http.Response) {
	if resp == nil {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
}

func mediaType(resp *http.Response) string {
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil {
		return strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Type")))
	}
	return mt
}

func requestBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, fmt.Errorf("reading request body: %w", err)
	}
	return b, nil
}

func digest(body []byte) [32]byte { return sha256.Sum256(body) }

// cleanToolList is the HTTP side of stdioConn.cleanToolList: the body of
// a tools/list answer with its malformed or too-deep tools left out (each
// skipped with a warning), or nil when there is nothing to change.
func (t *headerTransport) cleanToolList(body []byte) []byte {
	m, ok := readDeepMessage(body)
	if !ok || m.isErr || m.result == nil || !m.id.IsValid() {
		return nil
	}
	changed := false
	result := keepWellFormedTools(m.result, func(index int, problem string) {
		changed = true
		t.warns.Warn(t.log, "skipping a tool the server listed: "+problem, "index_in_page", index)
	})
	if !changed {
		return nil
	}
	out, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: m.id, Result: result})
	if err != nil {
		return nil
	}
	return out
}

// message is what the transport needs to know of an outgoing JSON-RPC
// message.
type message struct {
	Method string          `json:"method"`
	ID     json.RawMessage `json:"id"`
}

func (m message) isCall() bool {
	return m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null"
}

func peekMessage(body []byte) message {
	var m message
	_ = json.Unmarshal(body, &m)
	return m
}

// jsonRPCError returns the error of a JSON-RPC error response, or nil.
func jsonRPCError(body []byte) *jsonrpc.Error {
	var m struct {
		JSONRPC string         `json:"jsonrpc"`
		Error   *jsonrpc.Error `json:"error"`
	}
	if json.Unmarshal(body, &m) != nil || m.JSONRPC != "2.0" || m.Error == nil {
		return nil
	}
	return m.Error
}

// serverAnswer carries a JSON-RPC error out of RoundTrip. It is its own
// type because go-sdk's wrapping also contains a *jsonrpc.Error
// (jsonrpc2.ErrRejected) that errors.As would find first.
type serverAnswer struct{ err *jsonrpc.Error }

func (a *serverAnswer) Error() string { return a.err.Error() }
func (a *serverAnswer) Unwrap() error { return a.err }

// oauthAdapter puts the status mapping around the host's OAuth handler:
// go-sdk calls Authorize for every 401 and 403, and reports a failure of
// it with no status at all.
type oauthAdapter struct {
	inner     auth.OAuthHandler
	transport *headerTransport
}

func (a *oauthAdapter) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	return a.inner.TokenSource(ctx)
}

func (a *oauthAdapter) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	e := authErrorFrom(resp)
	if resp.StatusCode == http.StatusForbidden && e.Scope == "" {
		// Not a scope challenge: no authorization can fix it.
		return a.transport.httpError(req, resp, "", 1)
	}
	if err := a.inner.Authorize(ctx, req, resp); err != nil {
		e.Err = err
		return e
	}
	if req.GetBody != nil {
		if rc, err := req.GetBody(); err == nil {
			body, _ := io.ReadAll(rc)
			a.transport.authorized.Store(digest(body), struct{}{})
		}
	}
	return nil
}

// ErrSessionExpired is a 404 answer to a request that carried a session
// id: the server forgot the session. The Client re-initializes once and
// replays the request; callers see it only when that did not help.
var ErrSessionExpired = errors.New("MCP session expired: the server answered HTTP 404 for the session id")

// Problems an HTTPError names beyond its status.
const (
	problemContentType = "unexpected content type"
	problemInvalidJSON = "response is not valid JSON"
)

// HTTPError is an HTTP answer the host cannot use: a status that maps to
// no other error, an unexpected content type, or a body that is not
// JSON. Body is a preview of at most 8192 bytes with credentials
// redacted. Callers report it; a retry is pointless unless Retryable.
type HTTPError struct {
	Status      int
	ContentType string
	// Problem is "" for a plain status failure.
	Problem  string
	Body     string
	Attempts int
}

func (e *HTTPError) Error() string {
	var s string
	switch e.Problem {
	case "":
		s = fmt.Sprintf("HTTP %d %s", e.Status, http.StatusText(e.Status))
	case problemContentType:
		s = fmt.Sprintf("unexpected content type %q in an HTTP %d answer (want application/json or text/event-stream)", e.ContentType, e.Status)
	default:
		s = fmt.Sprintf("%s (HTTP %d, %s)", e.Problem, e.Status, e.ContentType)
	}
	if e.Attempts > 1 {
		s += fmt.Sprintf(" after %d attempts", e.Attempts)
	}
	if e.Body != "" {
		s += ": " + e.Body
	}
	return s
}

// Retryable reports whether the status is a transient one.
func (e *HTTPError) Retryable() bool { return e.Problem == "" && retriedStatus(e.Status) }

// AuthError is a server refusing the host's credentials: HTTP 401 with a
// WWW-Authenticate challenge (a login can fix it) or HTTP 403 with an
// insufficient_scope challenge (a login granting Scope can fix it).
type AuthError struct {
	Status int
	// Challenge is true when the server sent WWW-Authenticate: it speaks
	// OAuth and a login can fix this.
	Challenge bool
	// Scope is the scope an insufficient_scope challenge asked for.
	Scope string
	// Err is why the OAuth handler could not authorize, when one ran.
	Err error
}

func (e *AuthError) Error() string {
	s := fmt.Sprintf("HTTP %d %s", e.Status, http.StatusText(e.Status))
	switch {
	case e.Scope != "":
		s += fmt.Sprintf(" (insufficient scope %q)", e.Scope)
	case e.Status == http.StatusUnauthorized && e.Challenge:
		s += " (login required)"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *AuthError) Unwrap() error { return e.Err }

var scopeParam = regexp.MustCompile(`scope="([^"]*)"`)

// authErrorFrom reads the challenges of a 401/403; every header value is
// searched, since a server may send a Basic challenge first.
func authErrorFrom(resp *http.Response) *AuthError {
	e := &AuthError{Status: resp.StatusCode}
	for _, v := range resp.Header.Values("WWW-Authenticate") {
		e.Challenge = true
		if resp.StatusCode == http.StatusForbidden && strings.Contains(v, "insufficient_scope") {
			if m := scopeParam.FindStringSubmatch(v); m != nil {
				e.Scope = m[1]
			} else {
				e.Scope = "(unspecified)"
			}
		}
	}
	return e
}

// specificError digs the host's own HTTP error out of go-sdk's wrapping
// ("calling …: sending …: rejected: Post "URL": …"), which says nothing a
// user can act on and may quote the URL.
func specificError(err error) error {
	var ae *AuthError
	if errors.As(err, &ae) {
		return ae
	}
	var he *HTTPError
	if errors.As(err, &he) {
		return he
	}
	var re *RedirectError
	if errors.As(err, &re) {
		return re
	}
	if errors.Is(err, ErrSessionExpired) {
		return ErrSessionExpired
	}
	var sa *serverAnswer
	if errors.As(err, &sa) {
		return sa.err
	}
	return err
}
