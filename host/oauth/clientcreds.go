package oauth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// ClientCredentialsOptions configures a machine-to-machine server
// (oauth { grant = "client_credentials" }): the host authenticates as
// itself, with no user and no login.
type ClientCredentialsOptions struct {
	Server   string
	URL      string
	ClientID string
	// ClientSecret authenticates with client_secret_basic or _post, as
	// the authorization server prefers.
	ClientSecret string
	// PrivateKeyPEM authenticates with a signed JWT (private_key_jwt)
	// instead of a secret.
	PrivateKeyPEM []byte
	// Scopes override the discovered ones (private_key_jwt only: go-sdk's
	// secret flow takes the server's).
	Scopes []string
	// Resource overrides the resource the server's metadata names.
	Resource   string
	HTTPClient *http.Client
}

// NewClientCredentials returns the OAuth handler of a machine-to-machine
// server. With a secret it is go-sdk's extauth handler; with a private key
// it signs a client assertion (RFC 7523), which go-sdk lacks.
func NewClientCredentials(opts ClientCredentialsOptions) (auth.OAuthHandler, error) {
	if opts.ClientID == "" {
		return nil, fmt.Errorf("client credentials for %q: client_id is required", opts.Server)
	}
	if len(opts.PrivateKeyPEM) > 0 {
		key, err := parseSigningKey(opts.PrivateKeyPEM)
		if err != nil {
			return nil, fmt.Errorf("client credentials for %q: private_key_file: %w", opts.Server, err)
		}
		return &jwtClient{opts: opts, key: key}, nil
	}
	if opts.ClientSecret == "" {
		return nil, fmt.Errorf("client credentials for %q: set client_secret_env_var or private_key_file in the oauth block", opts.Server)
	}
	h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
		Credentials: &oauthex.ClientCredentials{
			ClientID:         opts.ClientID,
			ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: opts.ClientSecret},
		},
		HTTPClient: opts.HTTPClient,
	})
	if err != nil {
		return nil, fmt.Errorf("client credentials for %q: %w", opts.Server, err)
	}
	return &serialized{inner: h}, nil
}

// serialized guards a handler that keeps its token source in an unguarded
// field (extauth's): go-sdk reads it from every request goroutine.
type serialized struct {
	mu    sync.Mutex
	inner auth.OAuthHandler
}

func (s *serialized) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts, err := s.inner.TokenSource(ctx)
	if err != nil || ts == nil {
		return nil, err
	}
	return &lockedSource{mu: &s.mu, ts: ts}, nil
}

func (s *serialized) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	// extauth keeps this ctx for every later token fetch: it must outlive
	// the request that triggered the authorization.
	return s.inner.Authorize(context.WithoutCancel(ctx), req, resp)
}

type lockedSource struct {
	mu *sync.Mutex
	ts oauth2.TokenSource
}

func (l *lockedSource) Token() (*oauth2.Token, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ts.Token()
}

// jwtClient is the client credentials grant authenticated with a signed
// JWT (private_key_jwt, RFC 7523 §2.2).
type jwtClient struct {
	opts ClientCredentialsOptions
	key  *signingKey

	mu sync.Mutex
	ts oauth2.TokenSource
}

func (j *jwtClient) TokenSource(context.Context) (oauth2.TokenSource, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.ts == nil {
		return nil, nil
	}
	return j.ts, nil
}

func (j *jwtClient) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	cs := challenges(resp)
	server, err := discoverServer(ctx, j.opts.HTTPClient, cs, j.opts.URL, j.opts.Resource)
	if err != nil {
		return fmt.Errorf("client credentials for %q: %w", j.opts.Server, err)
	}
	if algs := server.asm.TokenEndpointAuthSigningAlgValuesSupported; len(algs) > 0 && !slices.Contains(algs, j.key.alg) {
		return fmt.Errorf("client credentials for %q: the authorization server accepts client assertions signed with %s, not %s: use another key type",
			j.opts.Server, strings.Join(algs, ", "), j.key.alg)
	}
	scopes := j.opts.Scopes
	if len(scopes) == 0 {
		scopes = server.scopes(cs)
	}
	src := &assertionSource{
		client:   j,
		tokenURL: server.asm.TokenEndpoint,
		audience: server.asm.Issuer,
		resource: server.resource,
		scopes:   scopes,
	}
	tok, err := src.Token()
	if err != nil {
		return err
	}
	j.mu.Lock()
	j.ts = oauth2.ReuseTokenSourceWithExpiry(tok, src, RefreshSkew)
	j.mu.Unlock()
	return nil
}

// assertionSource fetches a token with a fresh assertion each time: an
// assertion is short-lived and single-use.
type assertionSource struct {
	client   *jwtClient
	tokenURL string
	audience string
	resource string
	scopes   []string
}

const assertionLifetime = 5 * time.Minute

func (a *assertionSource) Token() (*oauth2.Token, error) {
	now := time.Now()
	assertion, err := a.client.key.sign(map[string]any{
		"iss": a.client.opts.ClientID,
		"sub": a.client.opts.ClientID,
		"aud": a.audience,
		"iat": now.Unix(),
		"exp": now.Add(assertionLifetime).Unix(),
		"jti": rand.Text(),
	})
	if err != nil {
		return nil, err
	}
	params := url.Values{
		"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
		"client_assertion":      {assertion},
	}
	if a.resource != "" {
		params.Set("resource", a.resource)
	}
	cfg := clientcredentials.Config{
		ClientID:       a.client.opts.ClientID,
		TokenURL:       a.tokenURL,
		Scopes:         a.scopes,
		EndpointParams: params,
		AuthStyle:      oauth2.AuthStyleInParams,
	}
	ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
	defer cancel()
	tok, err := cfg.Token(withClient(ctx, a.client.opts.HTTPClient))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return nil, &RefreshError{Server: a.client.opts.Server, Err: re}
		}
		return nil, fmt.Errorf("client credentials for %q: %w", a.client.opts.Server, err)
	}
	return tok, nil
}

// protectedServer is what discovery learned about a server: its
// authorization server and the resource to ask tokens for.
type protectedServer struct {
	prm      *oauthex.ProtectedResourceMetadata // nil for a 2025-03-26 server
	asm      *oauthex.AuthServerMeta
	resource string
}

// scopes are the challenge's scope, else the server's advertised ones.
func (p *protectedServer) scopes(cs []oauthex.Challenge) []string {
	if s := challengeParam(cs, "scope"); s != "" {
		return strings.Fields(s)
	}
	if p.prm != nil {
		return p.prm.ScopesSupported
	}
	return nil
}

// discoverServer runs protected-resource and authorization-server
// discovery with go-sdk's validation, falling back to the 2025-03-26
// conventions (the server's origin is the authorization server) when the
// server publishes no resource metadata.
func discoverServer(ctx context.Context, client *http.Client, cs []oauthex.Challenge, serverURL, resource string) (*protectedServer, error) {
	prm, _, err := resourceMetadata(ctx, client, cs, serverURL, resource)
	if err != nil {
		return nil, err
	}
	p := &protectedServer{prm: prm, resource: resource}
	issuer := originOf(serverURL)
	if prm != nil {
		if len(prm.AuthorizationServers) == 0 {
			return nil, errors.New("the protected resource metadata names no authorization server")
		}
		issuer = prm.AuthorizationServers[0]
		if p.resource == "" {
			p.resource = prm.Resource
		}
	}
	if p.resource == "" {
		p.resource = serverURL
	}
	asm, err := auth.GetAuthServerMetadata(ctx, issuer, client)
	if err != nil {
		return nil, fmt.Errorf("reading the authorization server metadata of %s: %w", issuer, err)
	}
	if asm == nil {
		asm = &oauthex.AuthServerMeta{Issuer: issuer, TokenEndpoint: strings.TrimSuffix(issuer, "/") + "/token"}
	}
	p.asm = asm
	return p, nil
}
