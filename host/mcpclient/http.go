package mcpclient

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func (c *Client) httpTransport() mcp.Transport {
	h := c.opts.HTTP
	base := http.DefaultTransport
	if h.Client != nil && h.Client.Transport != nil {
		base = h.Client.Transport
	}
	c.auth = &headerTransport{base: base, header: h.Header, progress: &c.progress}
	hc := &http.Client{Transport: c.auth}
	if h.Client != nil {
		// Keep the caller's redirect policy and jar; never a Timeout,
		// which would cut the long-lived SSE stream.
		hc.CheckRedirect, hc.Jar = h.Client.CheckRedirect, h.Client.Jar
	}
	return &mcp.StreamableClientTransport{
		Endpoint:     h.URL,
		HTTPClient:   hc,
		OAuthHandler: h.OAuth,
	}
}

// headerTransport adds the server block's static headers to every
// request. go-sdk's transport has no header option.
type headerTransport struct {
	base   http.RoundTripper
	header http.Header
	// refused is the last 401/403 seen: go-sdk's errors lose the status
	// and the challenge, which are what tell a user how to log in.
	refused atomic.Pointer[AuthError]
	// progress receives progress notifications read off event streams.
	progress *progressRouter
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.header) > 0 || r.Header.Get("User-Agent") == "" {
		r = r.Clone(r.Context())
		for k, vs := range t.header {
			r.Header[k] = append([]string(nil), vs...)
		}
		if r.Header.Get("User-Agent") == "" {
			r.Header.Set("User-Agent", "toolgate/"+Version)
		}
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		t.refused.Store(authErrorFrom(resp))
	}
	if t.progress != nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &sseProgress{body: resp.Body, router: t.progress}
	}
	return resp, err
}

// AuthError is a server refusing the host's credentials (HTTP 401/403).
type AuthError struct {
	Status int
	// Challenge is true when the server sent WWW-Authenticate: it speaks
	// OAuth and a login can fix this.
	Challenge bool
	// Scope is the scope an insufficient_scope challenge asked for.
	Scope string
	Err   error
}

func (e *AuthError) Error() string {
	s := fmt.Sprintf("HTTP %d %s", e.Status, http.StatusText(e.Status))
	if e.Scope != "" {
		s += fmt.Sprintf(" (insufficient scope %q)", e.Scope)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *AuthError) Unwrap() error { return e.Err }

var scopeParam = regexp.MustCompile(`scope="([^"]*)"`)

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
