package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// grantJWTBearer is the RFC 7523 authorization grant.
const grantJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// CrossAppOptions configures cross-app access (SEP-990, "enterprise
// managed authorization"): the user's enterprise identity provider vouches
// for them with an identity assertion grant (ID-JAG), which the MCP
// server's authorization server trades for an access token. No browser.
type CrossAppOptions struct {
	Server string
	URL    string
	// ClientID and ClientSecret identify the host at the MCP server's
	// authorization server.
	ClientID     string
	ClientSecret string
	// IDToken returns the user's OpenID Connect ID token from the
	// identity provider (how it was obtained is the caller's business).
	IDToken func(ctx context.Context) (string, error)
	// IdPTokenEndpoint is where the ID token is exchanged for an ID-JAG;
	// IdPClientID and IdPClientSecret identify the host there.
	IdPTokenEndpoint string
	IdPClientID      string
	IdPClientSecret  string
	Scopes           []string
	HTTPClient       *http.Client
}

// NewCrossApp returns the OAuth handler of a cross-app access server. The
// token exchange is go-sdk's (oauthex.ExchangeToken); the JWT bearer grant
// authenticates the client the way the authorization server advertises,
// which go-sdk's extauth enterprise handler does not.
func NewCrossApp(opts CrossAppOptions) (auth.OAuthHandler, error) {
	switch {
	case opts.ClientID == "":
		return nil, fmt.Errorf("cross-app access for %q: a client id is required", opts.Server)
	case opts.IDToken == nil:
		return nil, fmt.Errorf("cross-app access for %q: an ID token source is required", opts.Server)
	case opts.IdPTokenEndpoint == "" || opts.IdPClientID == "":
		return nil, fmt.Errorf("cross-app access for %q: the identity provider's token endpoint and client id are required", opts.Server)
	}
	return &crossApp{opts: opts}, nil
}

type crossApp struct {
	opts CrossAppOptions

	mu sync.Mutex
	ts oauth2.TokenSource
}

func (c *crossApp) TokenSource(context.Context) (oauth2.TokenSource, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ts == nil {
		return nil, nil
	}
	return c.ts, nil
}

func (c *crossApp) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	cs := challenges(resp)
	server, err := discoverServer(ctx, c.opts.HTTPClient, cs, c.opts.URL, "")
	if err != nil {
		return fmt.Errorf("cross-app access for %q: %w", c.opts.Server, err)
	}
	idToken, err := c.opts.IDToken(ctx)
	if err != nil {
		return fmt.Errorf("cross-app access for %q: getting the ID token: %w", c.opts.Server, err)
	}
	scopes := c.opts.Scopes
	if len(scopes) == 0 {
		scopes = server.scopes(cs)
	}
	idp := &oauthex.ClientCredentials{ClientID: c.opts.IdPClientID}
	if c.opts.IdPClientSecret != "" {
		idp.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: c.opts.IdPClientSecret}
	}
	jag, err := oauthex.ExchangeToken(ctx, c.opts.IdPTokenEndpoint, &oauthex.TokenExchangeRequest{
		RequestedTokenType: oauthex.TokenTypeIDJAG,
		Audience:           server.asm.Issuer,
		Resource:           server.resource,
		Scope:              scopes,
		SubjectToken:       idToken,
		SubjectTokenType:   oauthex.TokenTypeIDToken,
	}, idp, c.opts.HTTPClient)
	if err != nil {
		return fmt.Errorf("cross-app access for %q: exchanging the ID token at the identity provider: %w", c.opts.Server, scrubRetrieve(err))
	}
	cfg := oauth2.Config{
		ClientID:     c.opts.ClientID,
		ClientSecret: c.opts.ClientSecret,
		Endpoint:     oauth2.Endpoint{TokenURL: server.asm.TokenEndpoint, AuthStyle: preferredAuthStyle(server.asm.TokenEndpointAuthMethodsSupported)},
		Scopes:       scopes,
	}
	tok, err := cfg.Exchange(withClient(ctx, c.opts.HTTPClient), "",
		oauth2.SetAuthURLParam("grant_type", grantJWTBearer),
		oauth2.SetAuthURLParam("assertion", jag.AccessToken))
	if err != nil {
		return fmt.Errorf("cross-app access for %q: trading the ID-JAG for an access token: %w", c.opts.Server, scrubRetrieve(err))
	}
	c.mu.Lock()
	// No refresh: when the token dies the server answers 401 and the
	// exchange runs again.
	c.ts = oauth2.StaticTokenSource(tok)
	c.mu.Unlock()
	return nil
}

// preferredAuthStyle follows the token endpoint's advertised client
// authentication; RFC 8414's default is client_secret_basic.
func preferredAuthStyle(methods []string) oauth2.AuthStyle {
	switch {
	case len(methods) == 0, slices.Contains(methods, "client_secret_basic"):
		return oauth2.AuthStyleInHeader
	case slices.Contains(methods, "client_secret_post"):
		return oauth2.AuthStyleInParams
	}
	return oauth2.AuthStyleAutoDetect
}

// scrubRetrieve keeps the OAuth error code of a token endpoint failure and
// drops the response body oauth2 quotes.
func scrubRetrieve(err error) error {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return err
	}
	if re.ErrorCode != "" {
		return fmt.Errorf("the token endpoint refused with %s", re.ErrorCode)
	}
	if re.Response != nil {
		return fmt.Errorf("the token endpoint answered HTTP %s", re.Response.Status)
	}
	return errors.New("the token endpoint refused")
}
