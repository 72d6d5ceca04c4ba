package tokenauth_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/toolgate/toolgate/host/tokenauth"
	"github.com/toolgate/toolgate/host/tokenauth/tokenauthtest"
)

const resource = "https://gateway.example.com/mcp"

func authFor(iss *tokenauthtest.Issuer) tokenauth.Policy {
	return tokenauth.Policy{
		Issuer: iss.URL, Resource: resource, Audiences: []string{resource},
		GroupsClaim: "groups", Claims: []string{"department"}, Leeway: 30 * time.Second,
	}
}

func TestValidatorAcceptsAGoodTokenAndReadsTheCaller(t *testing.T) {
	iss := tokenauthtest.New(t)
	v := tokenauth.New(authFor(iss), tokenauth.Options{})
	tok := iss.Token(t, "k1", tokenauthtest.Claims{Subject: "alice", Audience: []string{resource}, Scope: "mcp tools",
		Extra: map[string]any{"email": "alice@example.com", "groups": []string{"admins", "dev"}, "client_id": "ide", "department": "R&D"}})
	c, err := v.Validate(t.Context(), tok)
	if err != nil {
		t.Fatal(err)
	}
	if c.Subject != "alice" || c.Email != "alice@example.com" || c.ClientID != "ide" || c.Issuer != iss.URL ||
		strings.Join(c.Groups, ",") != "admins,dev" || c.Claims["department"] != "R&D" || strings.Join(c.Scopes, " ") != "mcp tools" {
		t.Errorf("caller = %+v", c)
	}
}

func TestValidatorRefuses(t *testing.T) {
	iss := tokenauthtest.New(t)
	unpublished := iss.NewKey(t)
	now := time.Now()
	for _, tc := range []struct {
		name   string
		cfg    func(*tokenauth.Policy)
		claims tokenauthtest.Claims
		kid    string
		token  func(string) string
		code   string
		cause  error
		says   string
	}{
		{name: "wrong audience", claims: tokenauthtest.Claims{Audience: []string{"https://other.example.com/mcp"}},
			code: tokenauth.CodeInvalidToken, cause: jwt.ErrInvalidAudience, says: "not issued for this gateway"},
		{name: "expired", claims: tokenauthtest.Claims{Expiry: now.Add(-time.Minute)},
			code: tokenauth.CodeInvalidToken, cause: jwt.ErrExpired, says: "expired"},
		{name: "not yet valid", claims: tokenauthtest.Claims{NotBefore: now.Add(5 * time.Minute)},
			code: tokenauth.CodeInvalidToken, cause: jwt.ErrNotValidYet, says: "not valid yet"},
		{name: "other issuer", claims: tokenauthtest.Claims{Issuer: "https://evil.example.com"},
			code: tokenauth.CodeInvalidToken, cause: jwt.ErrInvalidIssuer, says: "not issued by"},
		{name: "bad signature", token: func(tok string) string {
			// Flip the signature's last characters: same header and claims.
			return tok[:len(tok)-4] + strings.Map(func(r rune) rune {
				if r == 'A' {
					return 'B'
				}
				return 'A'
			}, tok[len(tok)-4:])
		}, code: tokenauth.CodeInvalidToken, says: "signature"},
		{name: "signed by an unpublished key", kid: unpublished, code: tokenauth.CodeInvalidToken, says: "key id"},
		{name: "missing scope", cfg: func(a *tokenauth.Policy) { a.Scopes = []string{"mcp"} }, claims: tokenauthtest.Claims{Scope: "other"},
			code: tokenauth.CodeInsufficientScope, says: `"mcp"`},
		{name: "not a JWT", token: func(string) string { return "opaque-token" }, code: tokenauth.CodeInvalidToken, says: "not a signed JWT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := authFor(iss)
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			v := tokenauth.New(cfg, tokenauth.Options{})
			c := tc.claims
			c.Subject = "alice"
			if c.Audience == nil {
				c.Audience = []string{resource}
			}
			kid := tc.kid
			if kid == "" {
				kid = "k1"
			}
			tok := iss.Token(t, kid, c)
			if tc.token != nil {
				tok = tc.token(tok)
			}
			caller, err := v.Validate(t.Context(), tok)
			var te *tokenauth.Error
			if !errors.As(err, &te) {
				t.Fatalf("Validate = %+v, %v; want a refusal", caller, err)
			}
			if te.Code != tc.code || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("refusal = %q (code %q); want code %q saying %q", err, te.Code, tc.code, tc.says)
			}
			if tc.cause != nil && !errors.Is(err, tc.cause) {
				t.Errorf("refusal %v does not wrap %v", err, tc.cause)
			}
			if strings.Contains(err.Error(), tok) {
				t.Error("the refusal contains the token")
			}
			ch := v.Challenge(err)
			if !strings.Contains(ch, `resource_metadata="https://gateway.example.com/.well-known/oauth-protected-resource/mcp"`) ||
				!strings.Contains(ch, `error="`+tc.code+`"`) {
				t.Errorf("challenge = %s", ch)
			}
		})
	}
}

func TestValidatorRefreshesKeysForAnUnknownKeyIDAtMostOncePerInterval(t *testing.T) {
	iss := tokenauthtest.New(t)
	now := time.Now()
	clock := func() time.Time { return now }
	v := tokenauth.New(authFor(iss), tokenauth.Options{Now: clock, MinRefresh: time.Minute})
	if _, err := v.Validate(t.Context(), iss.Token(t, "k1", tokenauthtest.Claims{Subject: "a", Audience: []string{resource}})); err != nil {
		t.Fatal(err)
	}
	if n := iss.Fetches.Load(); n != 1 {
		t.Fatalf("JWKS fetched %d times for the first token, want 1", n)
	}
	// The issuer rotates: a token signed with a new key is accepted after
	// one refresh...
	now = now.Add(2 * time.Minute)
	k2 := iss.NewKey(t)
	iss.Publish(t, k2)
	if _, err := v.Validate(t.Context(), iss.Token(t, k2, tokenauthtest.Claims{Subject: "a", Audience: []string{resource}})); err != nil {
		t.Fatalf("token with the rotated key: %v", err)
	}
	if n := iss.Fetches.Load(); n != 2 {
		t.Fatalf("JWKS fetched %d times after the rotation, want 2", n)
	}
	// ...while forged key ids do not make it fetch again within the interval.
	forged := iss.NewKey(t)
	for range 5 {
		if _, err := v.Validate(t.Context(), iss.Token(t, forged, tokenauthtest.Claims{Subject: "a", Audience: []string{resource}})); err == nil {
			t.Fatal("a token signed with an unpublished key was accepted")
		}
	}
	if n := iss.Fetches.Load(); n != 2 {
		t.Errorf("JWKS fetched %d times for unknown key ids within the interval, want 2", n)
	}
	// Known keys still work without fetching.
	if _, err := v.Validate(t.Context(), iss.Token(t, "k1", tokenauthtest.Claims{Subject: "a", Audience: []string{resource}})); err != nil {
		t.Fatal(err)
	}
	if n := iss.Fetches.Load(); n != 2 {
		t.Errorf("JWKS fetched %d times, want 2", n)
	}
}

func TestMetadataNamesTheIssuer(t *testing.T) {
	iss := tokenauthtest.New(t)
	cfg := authFor(iss)
	cfg.Scopes = []string{"mcp"}
	m := tokenauth.New(cfg, tokenauth.Options{}).Metadata()
	if m.Resource != resource || len(m.AuthorizationServers) != 1 || m.AuthorizationServers[0] != iss.URL || len(m.ScopesSupported) != 1 {
		t.Errorf("metadata = %v", m)
	}
}

func TestAnAcceptedTokenStopsWorkingWhenItExpires(t *testing.T) {
	iss := tokenauthtest.New(t)
	now := time.Now()
	v := tokenauth.New(authFor(iss), tokenauth.Options{Now: func() time.Time { return now }})
	tok := iss.Token(t, "k1", tokenauthtest.Claims{Subject: "alice", Audience: []string{resource}, Expiry: now.Add(time.Minute)})
	for range 2 { // the second time from the cache of accepted tokens
		if _, err := v.Validate(t.Context(), tok); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(time.Minute + 31*time.Second) // past exp and the 30 s leeway
	if _, err := v.Validate(t.Context(), tok); !errors.Is(err, jwt.ErrExpired) {
		t.Errorf("an expired token, accepted before: %v, want expired", err)
	}
}

// TestValidatorRefusesAlgorithmsOutsideTheAllowList: a token signed with
// HMAC (the classic confusion: a shared secret where a public key is
// expected) or not signed at all ("none") is refused before any key is
// looked up, whatever its claims say.
func TestValidatorRefusesAlgorithmsOutsideTheAllowList(t *testing.T) {
	iss := tokenauthtest.New(t)
	v := tokenauth.New(authFor(iss), tokenauth.Options{})
	claims := jwt.Claims{Subject: "mallory", Issuer: iss.URL, Audience: []string{resource},
		Expiry: jwt.NewNumericDate(time.Now().Add(time.Hour)), IssuedAt: jwt.NewNumericDate(time.Now())}

	hmac, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte("a secret anyone could guess, 32+ bytes")},
		(&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	hs256, err := jwt.Signed(hmac).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	header, _ := json.Marshal(map[string]string{"alg": "none", "typ": "at+jwt", "kid": "k1"})
	body, _ := json.Marshal(claims)
	none := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(body) + "."

	for name, tok := range map[string]string{"HS256": hs256, "none": none} {
		t.Run(name, func(t *testing.T) {
			fetches := iss.Fetches.Load()
			caller, err := v.Validate(t.Context(), tok)
			var te *tokenauth.Error
			if !errors.As(err, &te) {
				t.Fatalf("Validate = %+v, %v; want a refusal", caller, err)
			}
			if te.Code != tokenauth.CodeInvalidToken || !strings.Contains(err.Error(), "not a signed JWT with an accepted algorithm") {
				t.Errorf("refusal = %q (code %q); want %q saying the algorithm is not accepted", err, te.Code, tokenauth.CodeInvalidToken)
			}
			if got := iss.Fetches.Load(); got != fetches {
				t.Errorf("the issuer's keys were fetched %d more times for a token refused by its algorithm", got-fetches)
			}
		})
	}
}
