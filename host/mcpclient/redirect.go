package mcpclient

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// MaxRedirects bounds the redirects one request follows, as browsers and
// Codex do.
const MaxRedirects = 10

// RedirectError is a redirect the host refuses to follow: one to another
// origin (scheme, host or port), one that would turn a POST into a GET
// (301/302/303), or one hop too many. The Streamable HTTP endpoint is one
// URL; every request carries the server block's credentials
// (Authorization, static or OAuth, and the configured headers), and a
// redirect elsewhere would hand them to whoever the server points at.
// From and To are origins only (no path or query, which may carry a
// token).
type RedirectError struct {
	Status int
	From   string
	To     string
	// Problem says which rule the redirect broke.
	Problem string
}

// Problems a RedirectError names.
const (
	redirectCrossOrigin = "cross-origin"
	redirectMethod      = "method change"
	redirectTooMany     = "too many"
)

func (e *RedirectError) Error() string {
	switch e.Problem {
	case redirectCrossOrigin:
		return fmt.Sprintf("the MCP server at %s redirected (HTTP %d) to another origin, %s; toolgate does not follow it, "+
			"so the server's credentials never reach %s. If the server really moved, set url in its server block to the new address",
			e.From, e.Status, e.To, e.To)
	case redirectMethod:
		return fmt.Sprintf("the MCP server at %s answered a POST with HTTP %d, a redirect that turns it into a GET; "+
			"set url in its server block to the address the server redirects to", e.From, e.Status)
	default:
		return fmt.Sprintf("the MCP server at %s redirected more than %d times; set url in its server block to the final address",
			e.From, MaxRedirects)
	}
}

// redirectPolicy is the http.Client CheckRedirect of the Streamable HTTP
// transport: same-origin redirects only, at most MaxRedirects hops, and
// never a method change. next is the caller's own policy, consulted for
// the redirects this one allows.
func redirectPolicy(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		first := via[0]
		status := 0
		if req.Response != nil {
			status = req.Response.StatusCode
		}
		from, to := origin(first.URL), origin(req.URL)
		switch {
		case from != to:
			return &RedirectError{Status: status, From: from, To: to, Problem: redirectCrossOrigin}
		case req.Method != first.Method:
			return &RedirectError{Status: status, From: from, To: to, Problem: redirectMethod}
		case len(via) > MaxRedirects:
			return &RedirectError{Status: status, From: from, To: to, Problem: redirectTooMany}
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
}

// origin is u's scheme://host:port, lower-cased, with the scheme's
// default port made explicit, so that http://a and http://a:80 are one
// origin and http://a:8080 is another.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

func endpointOrigin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return origin(u)
}

// isRedirect reports whether http.Client would follow an answer with
// this status (and a Location).
func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}
