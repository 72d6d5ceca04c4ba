package oauth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/toolgate/toolgate/host/config"
)

// DefaultLoginWait is how long a login waits for the browser to come back.
const DefaultLoginWait = 5 * time.Minute

// ClientName is how toolgate names itself when it registers.
const ClientName = "toolgate"

// LoginOptions configures an interactive login to one server.
type LoginOptions struct {
	Server string
	URL    string
	// OAuth is the server block's oauth settings; nil means none.
	OAuth *config.OAuth
	// ClientSecret is the value of oauth.client_secret_env_var, resolved
	// by the caller ("" for a public client).
	ClientSecret string
	// Store receives the credentials; nil keeps them in memory only.
	Store *Store
	// HTTPClient carries discovery, registration and token requests;
	// nil means http.DefaultClient.
	HTTPClient *http.Client
	// ClientMetadataURL is an HTTPS URL where toolgate's client metadata
	// document is published. Authorization servers that accept client ID
	// metadata documents then need no registration. "" offers none.
	ClientMetadataURL string
	// Browser opens the authorization URL; nil opens none (the URL is
	// printed either way). See SystemBrowser.
	Browser func(ctx context.Context, url string) error
	// Out receives what the user must do; nil discards it.
	Out io.Writer
	// Wait bounds the wait for the browser; 0 means DefaultLoginWait.
	Wait   time.Duration
	Logger hclog.Logger
}

// Login is the OAuth handler of an interactive login: hand it to the MCP
// client as its OAuth handler and connect. When the server asks for
// authorization, Login discovers the authorization server, registers,
// prints the authorization URL (and opens a browser when there is one),
// receives the code on its loopback callback and stores the tokens.
//
// A Login never reuses stored tokens: it exists to get new ones. Close it
// when done to stop the callback listener.
type Login struct {
	opts     LoginOptions
	key      Key
	log      hclog.Logger
	out      io.Writer
	callback *callback
	inner    *auth.AuthorizationCodeHandler
	// authorizing serializes Authorize: one browser round at a time.
	authorizing sync.Mutex

	mu         sync.Mutex
	ts         *tokenSource
	resource   string
	issuer     string
	authorized int // completed authorizations (step-up adds more)
}

var _ auth.OAuthHandler = (*Login)(nil)

// NewLogin prepares a login: it binds the callback listener (the
// callback_port of the oauth block, else any free port).
func NewLogin(opts LoginOptions) (*Login, error) {
	if opts.OAuth == nil {
		opts.OAuth = &config.OAuth{}
	}
	if opts.Wait <= 0 {
		opts.Wait = DefaultLoginWait
	}
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	cb, err := listenCallback(opts.OAuth.CallbackPort)
	if err != nil {
		return nil, err
	}
	l := &Login{
		opts:     opts,
		key:      Key{Server: opts.Server, URL: opts.URL},
		log:      log,
		out:      out,
		callback: cb,
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              cb.redirect,
		AuthorizationCodeFetcher: l.fetchCode,
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: registrationMetadata(cb.redirect),
		},
		RequestRefreshToken: true,
		Client:              opts.HTTPClient,
		NewTokenSource:      l.newTokenSource,
	}
	if o := opts.OAuth; o.ClientID != "" {
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: o.ClientID}
		if opts.ClientSecret != "" {
			cfg.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: opts.ClientSecret}
		}
	} else if opts.ClientMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: opts.ClientMetadataURL}
	}
	if scopes := opts.OAuth.Scopes; len(scopes) > 0 {
		// Configured scopes win over discovered ones.
		cfg.ScopeFilter = func([]string) []string { return append([]string(nil), scopes...) }
	}
	l.inner, err = auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		_ = cb.close()
		return nil, fmt.Errorf("preparing the OAuth login for %q: %w", opts.Server, err)
	}
	return l, nil
}

func registrationMetadata(redirect string) *oauthex.ClientRegistrationMetadata {
	return &oauthex.ClientRegistrationMetadata{
		RedirectURIs:            []string{redirect},
		ClientName:              ClientName,
		GrantTypes:              []string{"authorization_code", "refresh_token"},
		ResponseTypes:           []string{"code"},
		TokenEndpointAuthMethod: "none",
	}
}

// RedirectURL is the loopback callback the authorization server must
// send the browser to (register it for a pre-registered client).
func (l *Login) RedirectURL() string { return l.callback.redirect }

// Authorized reports whether the login obtained a token.
func (l *Login) Authorized() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.authorized > 0
}

// Entry returns the credentials the login obtained, or nil.
func (l *Login) Entry() *Entry {
	l.mu.Lock()
	ts := l.ts
	l.mu.Unlock()
	if ts == nil {
		return nil
	}
	e := ts.current()
	return &e
}

// Close stops the callback listener.
func (l *Login) Close() error { return l.callback.close() }

// TokenSource implements auth.OAuthHandler.
func (l *Login) TokenSource(context.Context) (oauth2.TokenSource, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ts == nil {
		return nil, nil
	}
	return l.ts, nil
}

// Authorize implements auth.OAuthHandler: it runs the authorization code
// flow for a 401, or for a 403 insufficient_scope (step-up).
func (l *Login) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	l.authorizing.Lock()
	defer l.authorizing.Unlock()
	if e := l.Entry(); e != nil && resp.StatusCode == http.StatusUnauthorized && bearerOf(req) != e.AccessToken {
		return nil // sent before a concurrent login finished: retry with its token
	}
	cs := challenges(resp)
	if resp.StatusCode == http.StatusForbidden {
		if _, ok := scopeChallenge(resp, cs); !ok {
			return errors.New("the server refused access (HTTP 403) without asking for a scope: a login cannot fix that")
		}
	}
	prm, found, err := resourceMetadata(ctx, l.opts.HTTPClient, cs, l.opts.URL, l.opts.OAuth.Resource)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.resource = l.opts.OAuth.Resource
	if prm != nil {
		if l.resource == "" {
			l.resource = prm.Resource
		}
		if len(prm.AuthorizationServers) > 0 {
			l.issuer = prm.AuthorizationServers[0]
		}
	}
	if l.resource == "" {
		l.resource = l.opts.URL
	}
	l.mu.Unlock()
	if !found {
		asm, err := legacyAuthServer(ctx, l.opts.HTTPClient, l.opts.URL)
		if err != nil {
			return err
		}
		if asm != nil && !sameIssuer(asm.Issuer, originOf(l.opts.URL)) {
			// go-sdk would refuse this document for its issuer.
			return l.legacyAuthorize(ctx, cs, asm)
		}
	}
	return l.inner.Authorize(ctx, req, resp)
}

// fetchCode shows the user where to log in and waits for the callback.
func (l *Login) fetchCode(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	l.callback.expect(stateOf(args.URL))
	fmt.Fprintf(l.out, "To log in to the %s MCP server, open this URL in a browser:\n\n    %s\n\n", l.opts.Server, args.URL)
	if l.opts.Browser != nil {
		switch err := l.opts.Browser(ctx, args.URL); {
		case err == nil:
			fmt.Fprintln(l.out, "Your browser was opened at that URL.")
		case !errors.Is(err, ErrNoBrowser):
			l.log.Debug("could not open a browser", "error", err)
		}
	}
	fmt.Fprintf(l.out, "Waiting for the authorization server to send the browser back to %s (up to %s; Ctrl-C cancels)…\n",
		l.callback.redirect, l.opts.Wait)
	return l.callback.wait(ctx, l.opts.Wait)
}

// newTokenSource stores what a completed authorization produced and
// hands go-sdk a token source that refreshes and persists itself.
func (l *Login) newTokenSource(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
	l.mu.Lock()
	e := &Entry{
		Server:       l.opts.Server,
		URL:          l.opts.URL,
		Issuer:       l.issuer,
		ClientID:     cfg.ClientID,
		ClientSecret: cfg.ClientSecret,
		TokenURL:     cfg.Endpoint.TokenURL,
		AuthStyle:    authStyleName(cfg.Endpoint.AuthStyle),
		Resource:     l.resource,
		Scopes:       grantedScopes(tok, cfg.Scopes),
		AccessToken:  tok.AccessToken,
		TokenType:    tok.TokenType,
		RefreshToken: tok.RefreshToken,
		ExpiresAt:    tok.Expiry,
	}
	l.mu.Unlock()
	if l.opts.Store != nil {
		if err := l.opts.Store.Save(ctx, l.key, e); err != nil {
			return nil, fmt.Errorf("saving the credentials of %q: %w", l.opts.Server, err)
		}
	}
	ts := newTokenSource(l.opts.Store, l.key, e, l.opts.HTTPClient, l.log)
	l.mu.Lock()
	l.ts = ts
	l.authorized++
	l.mu.Unlock()
	return ts, nil
}

// grantedScopes prefers what the token response says was granted.
func grantedScopes(tok *oauth2.Token, requested []string) []string {
	if s, ok := tok.Extra("scope").(string); ok && s != "" {
		return strings.Fields(s)
	}
	return append([]string(nil), requested...)
}

// legacyAuthorize runs the authorization code flow against a 2025-03-26
// server whose metadata names an issuer other than its origin, which
// go-sdk's RFC 8414 validation refuses. Same steps, same protections:
// PKCE S256, a state check, the resource indicator.
func (l *Login) legacyAuthorize(ctx context.Context, cs []oauthex.Challenge, asm *oauthex.AuthServerMeta) error {
	l.log.Debug("authorizing with 2025-03-26 metadata", "issuer", asm.Issuer)
	l.mu.Lock()
	l.issuer = asm.Issuer
	resource := l.resource
	l.mu.Unlock()
	cfg := &oauth2.Config{
		Endpoint:    oauth2.Endpoint{AuthURL: asm.AuthorizationEndpoint, TokenURL: asm.TokenEndpoint},
		RedirectURL: l.callback.redirect,
	}
	switch o := l.opts.OAuth; {
	case o.ClientID != "":
		cfg.ClientID, cfg.ClientSecret = o.ClientID, l.opts.ClientSecret
	case asm.RegistrationEndpoint != "":
		reg, err := oauthex.RegisterClient(ctx, asm.RegistrationEndpoint, registrationMetadata(l.callback.redirect), l.opts.HTTPClient)
		if err != nil {
			return fmt.Errorf("registering with the authorization server: %w", err)
		}
		cfg.ClientID, cfg.ClientSecret = reg.ClientID, reg.ClientSecret
		cfg.Endpoint.AuthStyle = registeredAuthStyle(reg.TokenEndpointAuthMethod)
	default:
		return fmt.Errorf("the authorization server %s offers no registration: set client_id in the oauth block", asm.Issuer)
	}
	switch {
	case len(l.opts.OAuth.Scopes) > 0:
		cfg.Scopes = l.opts.OAuth.Scopes
	case challengeParam(cs, "scope") != "":
		cfg.Scopes = strings.Fields(challengeParam(cs, "scope"))
	}

	verifier, state := oauth2.GenerateVerifier(), rand.Text()
	authURL := cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	res, err := l.fetchCode(ctx, &auth.AuthorizationArgs{URL: authURL})
	if err != nil {
		return err
	}
	if res.State != state {
		return errors.New("the authorization server answered with another login's state")
	}
	tok, err := cfg.Exchange(withClient(ctx, l.opts.HTTPClient), res.Code,
		oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	if err != nil {
		return fmt.Errorf("exchanging the authorization code: %w", err)
	}
	_, err = l.newTokenSource(ctx, cfg, tok)
	return err
}

func registeredAuthStyle(method string) oauth2.AuthStyle {
	switch method {
	case "client_secret_post", "none":
		return oauth2.AuthStyleInParams
	case "client_secret_basic", "":
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleAutoDetect
}

// bearerOf returns the access token a request carried.
func bearerOf(req *http.Request) string {
	v := req.Header.Get("Authorization")
	if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
		return strings.TrimSpace(v[7:])
	}
	return ""
}
