package oauthtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options shapes the server.
type Options struct {
	// TokenLifetime is the expires_in of access tokens; 0 means an hour.
	TokenLifetime time.Duration
	// Rotate makes every refresh return a new refresh token and retire
	// the old one, as OAuth 2.1 asks of public clients.
	Rotate bool
	// ClientID and ClientSecret enable the client_credentials grant for
	// that client (secret in Basic auth or in the form).
	ClientID     string
	ClientSecret string
}

// Counts is what the authorization server has done so far.
type Counts struct {
	Registrations  int
	Authorizations int
	CodeExchanges  int
	Refreshes      int
	// ClientGrants counts client_credentials tokens issued.
	ClientGrants int
	// RefusedRefreshes counts refresh tokens that were unknown or used.
	RefusedRefreshes int
}

// Server is the fixture. URL is the MCP endpoint; the authorization
// server is the same origin.
type Server struct {
	URL    string
	Issuer string
	srv    *httptest.Server
	opts   Options

	mu      sync.Mutex
	counts  Counts
	codes   map[string]string // code → PKCE challenge
	access  map[string]bool
	refresh map[string]bool
	seq     int
}

// New starts a server; it stops when the test ends.
func New(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.TokenLifetime == 0 {
		opts.TokenLifetime = time.Hour
	}
	s := &Server{opts: opts, codes: map[string]string{}, access: map[string]bool{}, refresh: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", s.resourceMetadata)
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.authServerMetadata)
	mux.HandleFunc("POST /register", s.register)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	mux.Handle("/mcp", s.protect(mcpHandler()))
	s.srv = httptest.NewServer(mux)
	s.Issuer = s.srv.URL
	s.URL = s.srv.URL + "/mcp"
	t.Cleanup(s.srv.Close)
	return s
}

func mcpHandler() http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "authorized"}}}, nil, nil
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: true})
}

// Counts returns a snapshot of the counters.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// Revoke makes the server refuse an access token from now on.
func (s *Server) Revoke(accessToken string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.access, accessToken)
}

// Valid reports whether the server accepts an access token.
func (s *Server) Valid(accessToken string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.access[accessToken]
}

// Issue mints a token pair as a login would have.
func (s *Server) Issue() (access, refresh string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issueLocked()
}

func (s *Server) issueLocked() (string, string) {
	s.seq++
	a, r := fmt.Sprintf("access-%d-%s", s.seq, rand.Text()[:8]), fmt.Sprintf("refresh-%d-%s", s.seq, rand.Text()[:8])
	s.access[a], s.refresh[r] = true, true
	return a, r
}

func (s *Server) protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !s.Valid(tok) {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, s.Issuer))
			http.Error(w, `{"error":"invalid_token"}`, http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) resourceMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, 200, map[string]any{"resource": s.URL, "authorization_servers": []string{s.Issuer}})
}

func (s *Server) authServerMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, 200, map[string]any{
		"issuer":                                s.Issuer,
		"authorization_endpoint":                s.Issuer + "/authorize",
		"token_endpoint":                        s.Issuer + "/token",
		"registration_endpoint":                 s.Issuer + "/register",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token", "client_credentials"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none", "client_secret_basic", "client_secret_post"},
	})
}

func (s *Server) register(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	s.counts.Registrations++
	s.mu.Unlock()
	writeJSON(w, 201, map[string]any{"client_id": "client-" + rand.Text()[:6], "token_endpoint_auth_method": "none"})
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || redirect.Hostname() != "127.0.0.1" {
		http.Error(w, "redirect_uri must be a loopback callback", http.StatusBadRequest)
		return
	}
	code := "code-" + rand.Text()
	s.mu.Lock()
	s.counts.Authorizations++
	s.codes[code] = q.Get("code_challenge")
	s.mu.Unlock()
	v := redirect.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	redirect.RawQuery = v.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, 400, map[string]string{"error": "invalid_request"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var refresh string
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		challenge, ok := s.codes[r.PostForm.Get("code")]
		delete(s.codes, r.PostForm.Get("code"))
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != challenge {
			writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
			return
		}
		s.counts.CodeExchanges++
	case "refresh_token":
		refresh = r.PostForm.Get("refresh_token")
		if !s.refresh[refresh] {
			s.counts.RefusedRefreshes++
			writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "unknown refresh token"})
			return
		}
		s.counts.Refreshes++
	case "client_credentials":
		id, secret, ok := r.BasicAuth()
		if !ok {
			id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		} else {
			id, _ = url.QueryUnescape(id)
			secret, _ = url.QueryUnescape(secret)
		}
		if s.opts.ClientID == "" || id != s.opts.ClientID || secret != s.opts.ClientSecret {
			writeJSON(w, 401, map[string]string{"error": "invalid_client"})
			return
		}
		s.counts.ClientGrants++
		access, _ := s.issueLocked()
		writeJSON(w, 200, map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": int(s.opts.TokenLifetime.Seconds())})
		return
	default:
		writeJSON(w, 400, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	access, newRefresh := s.issueLocked()
	if refresh != "" && !s.opts.Rotate {
		delete(s.refresh, newRefresh)
		newRefresh = refresh
	} else if refresh != "" {
		delete(s.refresh, refresh)
	}
	writeJSON(w, 200, map[string]any{
		"access_token":  access,
		"token_type":    "Bearer",
		"expires_in":    int(s.opts.TokenLifetime.Seconds()),
		"refresh_token": newRefresh,
	})
}
