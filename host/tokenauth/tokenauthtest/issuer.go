package tokenauthtest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Issuer is a running test authorization server.
type Issuer struct {
	Server *httptest.Server
	// URL is the issuer identifier (the iss of its tokens).
	URL string
	// Fetches counts GETs of the JWKS.
	Fetches atomic.Int64

	mu        sync.Mutex
	published []jose.JSONWebKey // what the JWKS serves
	keys      map[string]*rsa.PrivateKey
	next      int
}

// New starts an issuer with one published key, "k1".
func New(t testing.TB) *Issuer {
	t.Helper()
	iss := &Issuer{keys: map[string]*rsa.PrivateKey{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": iss.URL, "jwks_uri": iss.URL + "/jwks"})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		iss.Fetches.Add(1)
		iss.mu.Lock()
		set := jose.JSONWebKeySet{Keys: append([]jose.JSONWebKey(nil), iss.published...)}
		iss.mu.Unlock()
		_ = json.NewEncoder(w).Encode(set)
	})
	iss.Server = httptest.NewServer(mux)
	t.Cleanup(iss.Server.Close)
	iss.URL = iss.Server.URL
	iss.Publish(t, iss.NewKey(t))
	return iss
}

// NewKey makes a signing key without publishing it and returns its id.
func (iss *Issuer) NewKey(t testing.TB) string {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.next++
	kid := "k" + strconv.Itoa(iss.next)
	iss.keys[kid] = k
	return kid
}

// Publish adds kid's public key to the JWKS.
func (iss *Issuer) Publish(t testing.TB, kid string) {
	t.Helper()
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.published = append(iss.published, jose.JSONWebKey{Key: &iss.keys[kid].PublicKey, KeyID: kid, Algorithm: string(jose.RS256), Use: "sig"})
}

// Claims of a minted token; zero fields get defaults (see Token).
type Claims struct {
	Subject   string
	Audience  []string
	Issuer    string
	Expiry    time.Time
	NotBefore time.Time
	Scope     string
	Extra     map[string]any
}

// Token mints a token signed with kid. Defaults: issuer = iss.URL,
// expiry in an hour.
func (iss *Issuer) Token(t testing.TB, kid string, c Claims) string {
	t.Helper()
	iss.mu.Lock()
	key := iss.keys[kid]
	iss.mu.Unlock()
	if key == nil {
		t.Fatalf("no key %q", kid)
	}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", kid))
	if err != nil {
		t.Fatal(err)
	}
	if c.Issuer == "" {
		c.Issuer = iss.URL
	}
	if c.Expiry.IsZero() {
		c.Expiry = time.Now().Add(time.Hour)
	}
	std := jwt.Claims{Subject: c.Subject, Issuer: c.Issuer, Audience: c.Audience, Expiry: jwt.NewNumericDate(c.Expiry), IssuedAt: jwt.NewNumericDate(time.Now())}
	if !c.NotBefore.IsZero() {
		std.NotBefore = jwt.NewNumericDate(c.NotBefore)
	}
	extra := map[string]any{}
	for k, v := range c.Extra {
		extra[k] = v
	}
	if c.Scope != "" {
		extra["scope"] = c.Scope
	}
	tok, err := jwt.Signed(sig).Claims(std).Claims(extra).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
