package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// ResourceMismatchError is protected-resource metadata published for
// another resource than the server the host talks to. Authorizing against
// it would hand a token for this server to someone else's authorization
// server (or the other way round), so the host refuses.
type ResourceMismatchError struct {
	MetadataURL string
	Resource    string // what the metadata names
	Want        string // the server's URL (or the configured resource)
}

func (e *ResourceMismatchError) Error() string {
	return fmt.Sprintf("refusing to authorize: the protected resource metadata at %s is for %q, not %q. "+
		"If the server's canonical resource really differs from its URL, set resource in its oauth block",
		e.MetadataURL, e.Resource, e.Want)
}

// challenges parses every WWW-Authenticate value of resp; a malformed one
// is ignored rather than blocking a login.
func challenges(resp *http.Response) []oauthex.Challenge {
	var out []oauthex.Challenge
	for _, v := range resp.Header.Values("WWW-Authenticate") {
		cs, err := oauthex.ParseWWWAuthenticate([]string{v})
		if err == nil {
			out = append(out, cs...)
		}
	}
	return out
}

func challengeParam(cs []oauthex.Challenge, name string) string {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params[name] != "" {
			return c.Params[name]
		}
	}
	for _, c := range cs {
		if c.Params[name] != "" {
			return c.Params[name]
		}
	}
	return ""
}

// scopeChallenge returns the scope a 403 insufficient_scope challenge
// asks for, and whether it is such a challenge.
func scopeChallenge(resp *http.Response, cs []oauthex.Challenge) (string, bool) {
	if resp.StatusCode != http.StatusForbidden || challengeParam(cs, "error") != "insufficient_scope" {
		return "", false
	}
	return challengeParam(cs, "scope"), true
}

// resourceMetadata finds the server's protected-resource metadata in the
// order the MCP specification gives (the challenge's resource_metadata,
// then the path-based well-known URL, then the root one) and checks that
// it is for this server. found is false when the server publishes none: a
// 2025-03-26 server.
func resourceMetadata(ctx context.Context, client *http.Client, cs []oauthex.Challenge, serverURL, wantResource string) (prm *oauthex.ProtectedResourceMetadata, found bool, err error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return nil, false, fmt.Errorf("parsing the server URL: %w", err)
	}
	origin := (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
	type candidate struct{ url, resource string }
	var candidates []candidate
	if m := challengeParam(cs, "resource_metadata"); m != "" {
		candidates = append(candidates, candidate{m, serverURL})
	}
	candidates = append(candidates,
		candidate{origin + "/.well-known/oauth-protected-resource/" + strings.TrimLeft(u.Path, "/"), serverURL},
		candidate{origin + "/.well-known/oauth-protected-resource", origin})
	for _, c := range candidates {
		var doc oauthex.ProtectedResourceMetadata
		ok, err := getMetadata(ctx, client, c.url, &doc)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			continue
		}
		want := c.resource
		if wantResource != "" {
			want = wantResource
		}
		if !oauthex.MatchesResource([]string{doc.Resource}, want) && !oauthex.MatchesResource([]string{doc.Resource}, serverURL) {
			return nil, true, &ResourceMismatchError{MetadataURL: c.url, Resource: doc.Resource, Want: want}
		}
		return &doc, true, nil
	}
	return nil, false, nil
}

// legacyAuthServer returns the authorization server metadata a
// 2025-03-26 server publishes at its origin, or nil. Unlike RFC 8414
// discovery it accepts an issuer other than the origin: in that scheme
// the MCP server is the authorization base, and its own origin vouches
// for the document.
func legacyAuthServer(ctx context.Context, client *http.Client, serverURL string) (*oauthex.AuthServerMeta, error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return nil, fmt.Errorf("parsing the server URL: %w", err)
	}
	metaURL := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/.well-known/oauth-authorization-server"}).String()
	var asm oauthex.AuthServerMeta
	ok, err := getMetadata(ctx, client, metaURL, &asm)
	if err != nil || !ok {
		return nil, err
	}
	if asm.AuthorizationEndpoint == "" || asm.TokenEndpoint == "" {
		return nil, fmt.Errorf("the authorization server metadata at %s names no authorization or token endpoint", metaURL)
	}
	for _, e := range []string{asm.AuthorizationEndpoint, asm.TokenEndpoint, asm.RegistrationEndpoint} {
		if err := checkEndpoint(e); err != nil {
			return nil, fmt.Errorf("the authorization server metadata at %s: %w", metaURL, err)
		}
	}
	return &asm, nil
}

// getMetadata fetches a JSON metadata document. ok is false when there
// is none (any status but 200, or not JSON).
func getMetadata(ctx context.Context, client *http.Client, rawURL string, v any) (ok bool, err error) {
	if err := checkEndpoint(rawURL); err != nil {
		return false, nil // not a URL the host fetches metadata from
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return false, nil
	}
	req.Header.Set("Accept", "application/json")
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		return false, nil
	}
	defer resp.Body.Close()
	defer io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) //nolint:errcheck // draining for reuse
	if resp.StatusCode != http.StatusOK {
		return false, nil
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "application/json" {
		return false, nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v); err != nil {
		return false, nil
	}
	return true, nil
}

// checkEndpoint allows HTTPS anywhere and plain HTTP on loopback only,
// like go-sdk's discovery.
func checkEndpoint(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("invalid URL %q", raw)
	}
	switch {
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && loopback(u.Hostname()):
		return nil
	}
	return fmt.Errorf("URL %q is neither HTTPS nor loopback", raw)
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
}

func sameIssuer(a, b string) bool {
	return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
}
