package tokenauth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/toolgate/toolgate/host/identity"
)

// Error codes of a refusal, as RFC 6750 names them in WWW-Authenticate.
const (
	CodeInvalidToken      = "invalid_token"
	CodeInsufficientScope = "insufficient_scope"
)

// Error is a refused token. Its text never contains the token.
type Error struct {
	// Code is CodeInvalidToken or CodeInsufficientScope, or "" when the
	// request carried no token at all.
	Code string
	// Description says what was wrong, for the client and the log.
	Description string
	// Err is the cause, if any (errors.Is(err, jwt.ErrExpired), ...).
	Err error
}

func (e *Error) Error() string {
	if e.Code == "" {
		return e.Description
	}
	return e.Code + ": " + e.Description
}

func (e *Error) Unwrap() error { return e.Err }

// ErrKeys is matched (errors.Is) when the issuer's keys could not be
// fetched: the token may be fine, the gateway cannot tell.
var ErrKeys = errors.New("cannot fetch the issuer's signing keys")

// algorithms are the signature algorithms accepted; "none" and HMAC
// never are (a public JWKS cannot verify a shared secret).
var algorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// Options tune a Validator; the zero value is usable.
type Options struct {
	// Client fetches metadata and keys; default a client with a 10s timeout.
	Client *http.Client
	Logger hclog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
	// MinRefresh is the least time between two key fetches caused by
	// unknown key ids; default 30s.
	MinRefresh time.Duration
	// MaxAge is how long fetched keys are used before they are fetched
	// again; default 1h.
	MaxAge time.Duration
}

// Policy says which tokens a Validator accepts: toolgate serve's auth
// block, as host/gateway translates it.
type Policy struct {
	// Issuer is the authorization server's issuer URL (the iss claim).
	Issuer string
	// JWKSURL is where the issuer's signing keys are; "" = discover it
	// from the issuer's metadata (OIDC discovery, then RFC 8414).
	JWKSURL string
	// Resource is the gateway's own URL as clients know it (RFC 9728
	// resource, RFC 8707 resource indicator).
	Resource string
	// Audiences are the aud values accepted (one must match).
	Audiences []string
	// Scopes must all be granted by a token.
	Scopes []string
	// GroupsClaim names the claim that lists the caller's groups.
	GroupsClaim string
	// Claims are further claims copied into the caller's identity.
	Claims []string
	// Leeway is the clock skew allowed for exp and nbf.
	Leeway time.Duration
}

// Validator checks access tokens for one [Policy].
type Validator struct {
	policy Policy
	opts   Options

	// seen caches accepted tokens by SHA-256 until they expire, so a
	// session's every request does not pay an RSA verification (see
	// BenchmarkValidate). Only digests are kept, never tokens.
	seenMu sync.Mutex
	seen   map[[sha256.Size]byte]accepted

	mu      sync.Mutex // held across a fetch, so concurrent misses fetch once
	jwksURL string
	keys    *jose.JSONWebKeySet
	fetched time.Time // of keys; zero = never
	tried   time.Time // last fetch attempt, successful or not
}

// New returns a Validator for p. Nothing is fetched until the first
// token arrives.
func New(p Policy, opts Options) *Validator {
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MinRefresh <= 0 {
		opts.MinRefresh = 30 * time.Second
	}
	if opts.MaxAge <= 0 {
		opts.MaxAge = time.Hour
	}
	return &Validator{policy: p, opts: opts, jwksURL: p.JWKSURL}
}

// maxSeen bounds the accepted-token cache; when full it starts over.
const maxSeen = 4096

type accepted struct {
	caller *identity.Caller
	expiry time.Time // exp plus leeway
}

// claims are the registered claims plus the ones toolgate reads.
type claims struct {
	jwt.Claims
	ClientID string `json:"client_id"`
	AZP      string `json:"azp"`
	Email    string `json:"email"`
	Scope    string `json:"scope"`
	SCP      any    `json:"scp"`
}

// Validate checks token and returns who it names.
func (v *Validator) Validate(ctx context.Context, token string) (*identity.Caller, error) {
	if token == "" {
		return nil, &Error{Description: "this gateway requires an OAuth access token (Authorization: Bearer <token>)"}
	}
	sum := sha256.Sum256([]byte(token))
	v.seenMu.Lock()
	a, ok := v.seen[sum]
	v.seenMu.Unlock()
	if ok && v.opts.Now().Before(a.expiry) {
		return a.caller, nil
	}
	caller, expiry, err := v.validate(ctx, token)
	if err != nil {
		return nil, err
	}
	v.seenMu.Lock()
	if v.seen == nil || len(v.seen) >= maxSeen {
		v.seen = map[[sha256.Size]byte]accepted{}
	}
	v.seen[sum] = accepted{caller: caller, expiry: expiry}
	v.seenMu.Unlock()
	return caller, nil
}

// validate checks a token not seen before; it also returns until when
// the token stays acceptable.
func (v *Validator) validate(ctx context.Context, token string) (*identity.Caller, time.Time, error) {
	caller, c, err := v.check(ctx, token)
	if err != nil {
		return nil, time.Time{}, err
	}
	return caller, c.Expiry.Time().Add(v.policy.Leeway), nil
}

// check verifies the signature and claims of token.
func (v *Validator) check(ctx context.Context, token string) (*identity.Caller, *claims, error) {
	tok, err := jwt.ParseSigned(token, algorithms)
	if err != nil {
		return nil, nil, &Error{Code: CodeInvalidToken, Description: "the token is not a signed JWT with an accepted algorithm", Err: err}
	}
	if len(tok.Headers) != 1 {
		return nil, nil, &Error{Code: CodeInvalidToken, Description: "the token must carry exactly one signature"}
	}
	kid := tok.Headers[0].KeyID
	key, err := v.key(ctx, kid, tok.Headers[0].Algorithm)
	if err != nil {
		return nil, nil, err
	}
	var c claims
	var all map[string]json.RawMessage
	if err := tok.Claims(key, &c, &all); err != nil {
		return nil, nil, &Error{Code: CodeInvalidToken, Description: "the token's signature does not verify against the issuer's keys", Err: err}
	}
	if c.Expiry == nil {
		return nil, nil, &Error{Code: CodeInvalidToken, Description: "the token has no exp claim; access tokens must expire"}
	}
	if c.Subject == "" {
		return nil, nil, &Error{Code: CodeInvalidToken, Description: "the token has no sub claim, so the caller cannot be told apart"}
	}
	exp := jwt.Expected{Issuer: v.policy.Issuer, AnyAudience: v.policy.Audiences, Time: v.opts.Now()}
	if err := c.ValidateWithLeeway(exp, v.policy.Leeway); err != nil {
		return nil, nil, &Error{Code: CodeInvalidToken, Description: claimProblem(err, v.policy), Err: err}
	}
	scopes := grantedScopes(c)
	for _, want := range v.policy.Scopes {
		if !slices.Contains(scopes, want) {
			return nil, nil, &Error{Code: CodeInsufficientScope, Description: fmt.Sprintf("the token does not grant the scope %q, which this gateway requires", want)}
		}
	}
	caller := &identity.Caller{
		Subject: c.Subject, Issuer: c.Issuer, ClientID: c.ClientID, Email: c.Email, Scopes: scopes,
	}
	if caller.ClientID == "" {
		caller.ClientID = c.AZP
	}
	if raw, ok := all[v.policy.GroupsClaim]; ok {
		caller.Groups = stringsOf(raw)
	}
	for _, name := range v.policy.Claims {
		raw, ok := all[name]
		if !ok {
			continue
		}
		if caller.Claims == nil {
			caller.Claims = map[string]string{}
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			caller.Claims[name] = s
		} else {
			caller.Claims[name] = string(raw)
		}
	}
	return caller, &c, nil
}

func claimProblem(err error, p Policy) string {
	switch {
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return fmt.Sprintf("the token was not issued by %s", p.Issuer)
	case errors.Is(err, jwt.ErrInvalidAudience):
		return fmt.Sprintf("the token was not issued for this gateway (aud must include %s); request it with resource=%s", strings.Join(p.Audiences, " or "), p.Resource)
	case errors.Is(err, jwt.ErrExpired):
		return "the token has expired; get a new one"
	case errors.Is(err, jwt.ErrNotValidYet):
		return "the token is not valid yet (nbf); check the clocks"
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return "the token was issued in the future (iat); check the clocks"
	}
	return "the token's claims are not valid"
}

// grantedScopes reads scope (RFC 9068: space-separated) or scp (a list,
// as some issuers send).
func grantedScopes(c claims) []string {
	if c.Scope != "" {
		return strings.Fields(c.Scope)
	}
	switch s := c.SCP.(type) {
	case string:
		return strings.Fields(s)
	case []any:
		var out []string
		for _, x := range s {
			if str, ok := x.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

// stringsOf reads a claim that is a list of strings or one string.
func stringsOf(raw json.RawMessage) []string {
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && s != "" {
		return []string{s}
	}
	return nil
}

// key returns the verification key for kid, fetching the JWKS when it is
// unknown, stale or never fetched.
func (v *Validator) key(ctx context.Context, kid string, alg string) (*jose.JSONWebKey, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.opts.Now()
	if v.keys != nil && now.Sub(v.fetched) < v.opts.MaxAge {
		if k := pick(v.keys, kid, alg); k != nil {
			return k, nil
		}
		// An unknown key id: the issuer may have rotated its keys.
		// Forged ids must not make us fetch on every request.
		if now.Sub(v.tried) < v.opts.MinRefresh {
			return nil, &Error{Code: CodeInvalidToken, Description: fmt.Sprintf("the token's key id %q is not among the issuer's keys", kid)}
		}
	} else if v.keys == nil && !v.tried.IsZero() && now.Sub(v.tried) < v.opts.MinRefresh {
		return nil, &Error{Code: CodeInvalidToken, Description: "the issuer's signing keys could not be fetched recently; try again shortly", Err: ErrKeys}
	}
	v.tried = now
	// The fetch serves every waiting request, so one client hanging up
	// must not fail it (and hold the next attempt back for MinRefresh);
	// the client's own timeout bounds it.
	keys, err := v.fetch(context.WithoutCancel(ctx))
	if err != nil {
		v.opts.Logger.Warn("fetching the issuer's signing keys failed", "issuer", v.policy.Issuer, "error", err)
		if v.keys == nil {
			return nil, &Error{Code: CodeInvalidToken, Description: "the gateway cannot fetch the issuer's signing keys to check the token", Err: err}
		}
	} else {
		v.keys, v.fetched = keys, now
		v.opts.Logger.Debug("fetched the issuer's signing keys", "issuer", v.policy.Issuer, "keys", len(keys.Keys))
	}
	if k := pick(v.keys, kid, alg); k != nil {
		return k, nil
	}
	return nil, &Error{Code: CodeInvalidToken, Description: fmt.Sprintf("the token's key id %q is not among the issuer's keys", kid)}
}

// pick finds the signing key for kid (any signing key when the token
// names none and the set has one).
func pick(set *jose.JSONWebKeySet, kid, alg string) *jose.JSONWebKey {
	var found []jose.JSONWebKey
	if kid == "" {
		found = set.Keys
	} else {
		found = set.Key(kid)
	}
	var match *jose.JSONWebKey
	for i := range found {
		k := &found[i]
		if k.Use != "" && k.Use != "sig" || !k.IsPublic() || (k.Algorithm != "" && k.Algorithm != alg) {
			continue
		}
		if match != nil { // ambiguous without a kid
			return nil
		}
		match = k
	}
	return match
}

// fetch gets the key set, discovering its URL first if needed.
func (v *Validator) fetch(ctx context.Context) (*jose.JSONWebKeySet, error) {
	if v.jwksURL == "" {
		u, err := v.discover(ctx)
		if err != nil {
			return nil, err
		}
		v.jwksURL = u
	}
	var set jose.JSONWebKeySet
	if err := v.getJSON(ctx, v.jwksURL, &set); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKeys, err)
	}
	if len(set.Keys) == 0 {
		return nil, fmt.Errorf("%w: the key set at %s has no keys", ErrKeys, v.jwksURL)
	}
	return &set, nil
}

// discover reads jwks_uri from the issuer's metadata: OpenID Connect
// discovery first, then OAuth authorization server metadata (RFC 8414).
func (v *Validator) discover(ctx context.Context) (string, error) {
	iss := strings.TrimSuffix(v.policy.Issuer, "/")
	u, err := url.Parse(iss)
	if err != nil {
		return "", fmt.Errorf("%w: issuer %q: %w", ErrKeys, v.policy.Issuer, err)
	}
	candidates := []string{
		iss + "/.well-known/openid-configuration",
		u.Scheme + "://" + u.Host + "/.well-known/oauth-authorization-server" + u.Path,
	}
	var errs []error
	for _, c := range candidates {
		var meta struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := v.getJSON(ctx, c, &meta); err != nil {
			errs = append(errs, err)
			continue
		}
		if meta.Issuer != v.policy.Issuer {
			errs = append(errs, fmt.Errorf("%s names issuer %q, not %q", c, meta.Issuer, v.policy.Issuer))
			continue
		}
		if meta.JWKSURI == "" {
			errs = append(errs, fmt.Errorf("%s has no jwks_uri", c))
			continue
		}
		return meta.JWKSURI, nil
	}
	return "", fmt.Errorf("%w: discovering them from %s failed (set jwks_url in the auth block to skip discovery): %w", ErrKeys, v.policy.Issuer, errors.Join(errs...))
}

func (v *Validator) getJSON(ctx context.Context, u string, dst any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.opts.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(dst); err != nil {
		return fmt.Errorf("GET %s: not JSON: %w", u, err)
	}
	return nil
}

// MetadataPath is where the protected-resource metadata is served, per
// RFC 9728 §3.1: the well-known prefix, then the resource's path.
func MetadataPath(resource string) string {
	u, err := url.Parse(resource)
	if err != nil {
		return "/.well-known/oauth-protected-resource"
	}
	return "/.well-known/oauth-protected-resource" + strings.TrimSuffix(u.Path, "/")
}

// MetadataURL is the absolute URL of the metadata, for the challenge.
func MetadataURL(resource string) string {
	u, err := url.Parse(resource)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host + MetadataPath(resource)
}

// Metadata is the RFC 9728 protected-resource metadata document, in
// go-sdk's type (its auth.ProtectedResourceMetadataHandler serves it).
func (v *Validator) Metadata() *oauthex.ProtectedResourceMetadata {
	return &oauthex.ProtectedResourceMetadata{
		Resource:               v.policy.Resource,
		AuthorizationServers:   []string{v.policy.Issuer},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "toolgate",
		ScopesSupported:        v.policy.Scopes,
	}
}

// Challenge is the WWW-Authenticate value for a refusal (RFC 6750 §3,
// with RFC 9728's resource_metadata so clients find the issuer).
func (v *Validator) Challenge(err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, `Bearer resource_metadata=%q`, MetadataURL(v.policy.Resource))
	if len(v.policy.Scopes) > 0 {
		fmt.Fprintf(&b, `, scope=%q`, strings.Join(v.policy.Scopes, " "))
	}
	var te *Error
	if errors.As(err, &te) && te.Code != "" {
		fmt.Fprintf(&b, `, error=%q, error_description=%q`, te.Code, strings.ReplaceAll(te.Description, `"`, "'"))
	}
	return b.String()
}
