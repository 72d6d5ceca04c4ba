package gateway

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/identity"
	"github.com/toolgate/toolgate/host/tokenauth"
)

// authGuard checks OAuth access tokens (serve's auth block) and puts the
// caller they name into the request's context. It answers the
// protected-resource metadata (RFC 9728) itself, without a token: that
// is how a client learns where to get one.
type authGuard struct {
	v        *tokenauth.Validator
	metaPath string
	meta     http.Handler // go-sdk's: GET and CORS preflight
	g        *Gateway
	next     http.Handler
}

func (g *Gateway) newAuthGuard(e *Endpoint, next http.Handler) http.Handler {
	if e.Auth == nil {
		return next
	}
	v := g.newValidator(e.Auth)
	return &authGuard{v: v, metaPath: tokenauth.MetadataPath(e.Auth.Resource),
		meta: auth.ProtectedResourceMetadataHandler(v.Metadata()), g: g, next: next}
}

// newValidator returns a validator of the tokens a accepts. It is the one
// translation of serve's auth block into host/tokenauth's Policy, which
// takes no config types.
func (g *Gateway) newValidator(a *config.Auth) *tokenauth.Validator {
	return tokenauth.New(tokenauth.Policy{
		Issuer: a.Issuer, JWKSURL: a.JWKSURL, Resource: a.Resource, Audiences: a.Audiences,
		Scopes: a.Scopes, GroupsClaim: a.GroupsClaim, Claims: a.Claims, Leeway: a.Leeway,
	}, tokenauth.Options{Logger: g.log.Named("auth")})
}

func (a *authGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == a.metaPath || r.URL.Path == "/.well-known/oauth-protected-resource" {
		a.meta.ServeHTTP(w, r)
		return
	}
	token := ""
	if scheme, t, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		token = strings.TrimSpace(t)
	}
	caller, err := a.v.Validate(r.Context(), token)
	if err != nil {
		status := http.StatusUnauthorized
		var te *tokenauth.Error
		if errors.As(err, &te) && te.Code == tokenauth.CodeInsufficientScope {
			status = http.StatusForbidden
		}
		// The reason goes to the client and the debug log; the token
		// itself never does.
		a.g.log.Debug("refusing a request", "reason", err.Error())
		w.Header().Set("WWW-Authenticate", a.v.Challenge(err))
		http.Error(w, fmt.Sprintf("%s: %s", http.StatusText(status), err.Error()), status)
		return
	}
	a.next.ServeHTTP(w, r.WithContext(identity.With(r.Context(), caller)))
}

// sameCaller reports whether a request may address session s: with
// auth, a session answers only the caller who opened it, so its memory
// ("allow for this session") never serves anyone else.
func sameCaller(s *session, r *http.Request) bool {
	return s.caller.Key() == identity.From(r.Context()).Key()
}
