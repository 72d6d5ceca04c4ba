package oauth

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"golang.org/x/oauth2"

	"github.com/toolgate/toolgate/host/mcpclient"
	"github.com/toolgate/toolgate/host/oauth/oauthtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// Keep-alive connections of http.DefaultClient outlive a test
		// until the server side closes them.
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
	)
}

var ctx = context.Background()

func tempStore(t *testing.T) *Store {
	t.Helper()
	return NewStore(filepath.Join(t.TempDir(), "toolgate", "credentials.json"))
}

func TestStoreKeepsEntriesPrivateAndAtomic(t *testing.T) {
	s := tempStore(t)
	k := Key{Server: "github", URL: "https://example.test/mcp"}
	e := &Entry{ClientID: "c", TokenURL: "https://example.test/token", AccessToken: "a1", RefreshToken: "r1",
		ExpiresAt: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), Scopes: []string{"repo"}}
	if err := s.Save(ctx, k, e); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if mode := fi.Mode().Perm(); mode != 0o600 {
		t.Errorf("credentials file mode = %o, want 600", mode)
	}
	di, _ := os.Stat(filepath.Dir(s.Path()))
	if mode := di.Mode().Perm(); mode != 0o700 {
		t.Errorf("credentials directory mode = %o, want 700", mode)
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(s.Path()), ".credentials-*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
	got, err := s.Load(k)
	if err != nil {
		t.Fatal(err)
	}
	want := *e
	want.Server, want.URL, want.UpdatedAt = k.Server, k.URL, got.UpdatedAt
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("loaded entry (-want +got):\n%s", diff)
	}
	// The same name at another URL is another server.
	if other, err := s.Load(Key{Server: "github", URL: "https://elsewhere.test/mcp"}); err != nil || other != nil {
		t.Errorf("Load(other URL) = %v, %v; want nothing", other, err)
	}
}

func TestStoreWritesOnlyWhenCredentialsChange(t *testing.T) {
	s := tempStore(t)
	k := Key{Server: "s", URL: "https://s.test/mcp"}
	e := &Entry{ClientID: "c", AccessToken: "a"}
	if err := s.Save(ctx, k, e); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(s.Path())
	s.now = func() time.Time { return time.Now().Add(time.Hour) }
	if err := s.Save(ctx, k, e); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(s.Path())
	if !bytes.Equal(before, after) {
		t.Error("saving unchanged credentials rewrote the file")
	}
	e.AccessToken = "b"
	if err := s.Save(ctx, k, e); err != nil {
		t.Fatal(err)
	}
	if now, _ := os.ReadFile(s.Path()); bytes.Equal(before, now) {
		t.Error("changed credentials were not written")
	}
}

func TestCorruptStoreIsReportedAndKept(t *testing.T) {
	s := tempStore(t)
	if err := os.MkdirAll(filepath.Dir(s.Path()), 0o700); err != nil {
		t.Fatal(err)
	}
	garbage := []byte(`{"version":1,"servers":{"x":{"access_token":"sekrit-value"` + "\x00")
	if err := os.WriteFile(s.Path(), garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	k := Key{Server: "s", URL: "https://s.test/mcp"}
	_, err := s.Load(k)
	var ce *CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("Load = %v, want a CorruptError", err)
	}
	for _, want := range []string{s.Path(), "is corrupt", "not valid JSON at byte", "toolgate login"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "sekrit") {
		t.Errorf("the error quotes the file: %v", err)
	}
	// Other servers' logins are in there: never overwritten.
	if err := s.Save(ctx, k, &Entry{AccessToken: "new"}); !errors.As(err, &ce) {
		t.Fatalf("Save = %v, want the CorruptError", err)
	}
	if now, _ := os.ReadFile(s.Path()); !bytes.Equal(now, garbage) {
		t.Error("a corrupt credentials file was overwritten")
	}
	t.Run("wrong version", func(t *testing.T) {
		s := tempStore(t)
		_ = os.MkdirAll(filepath.Dir(s.Path()), 0o700)
		_ = os.WriteFile(s.Path(), []byte(`{"version":7,"servers":{}}`), 0o600)
		if _, err := s.Load(k); !errors.As(err, &ce) || !strings.Contains(err.Error(), "format version 7") {
			t.Fatalf("Load = %v", err)
		}
	})
}

// TestConcurrentStoresKeepEachOthersEntries: two hosts (two Stores on one
// file) writing at once lose nothing.
func TestConcurrentStoresKeepEachOthersEntries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "credentials.json")
	hosts := []*Store{NewStore(path), NewStore(path)}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			k := Key{Server: fmt.Sprint("s", i), URL: "https://s.test/mcp"}
			if err := hosts[i%2].Save(ctx, k, &Entry{AccessToken: fmt.Sprint("t", i)}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i := range 20 {
		e, err := hosts[0].Load(Key{Server: fmt.Sprint("s", i), URL: "https://s.test/mcp"})
		if err != nil || e == nil || e.AccessToken != fmt.Sprint("t", i) {
			t.Errorf("entry %d = %+v, %v", i, e, err)
		}
	}
}

// loggedIn stores credentials for srv as a login would have, with the
// access token expiring at expires.
func loggedIn(t *testing.T, srv *oauthtest.Server, store *Store, expires time.Time) (Key, *Entry) {
	t.Helper()
	access, refresh := srv.Issue()
	k := Key{Server: "proto", URL: srv.URL}
	e := &Entry{ClientID: "client", TokenURL: srv.Issuer + "/token", AuthStyle: "params", Resource: srv.URL,
		AccessToken: access, TokenType: "Bearer", RefreshToken: refresh, ExpiresAt: expires}
	if err := store.Save(ctx, k, e); err != nil {
		t.Fatal(err)
	}
	return k, e
}

func TestRefreshesThirtySecondsBeforeExpiry(t *testing.T) {
	tests := []struct {
		name        string
		left        time.Duration
		wantRefresh bool
	}{
		{"an hour left", time.Hour, false},
		{"31 s left", 31 * time.Second, false},
		{"29 s left", 29 * time.Second, true},
		{"expired", -time.Minute, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := oauthtest.New(t, oauthtest.Options{})
			store := tempStore(t)
			now := time.Now()
			k, e := loggedIn(t, srv, store, now.Add(tc.left))
			ts := newTokenSource(store, k, e, nil, nil)
			ts.now = func() time.Time { return now }
			tok, err := ts.Token()
			if err != nil {
				t.Fatal(err)
			}
			refreshed := srv.Counts().Refreshes == 1
			if refreshed != tc.wantRefresh {
				t.Fatalf("refreshed = %v, want %v", refreshed, tc.wantRefresh)
			}
			if tc.wantRefresh == (tok.AccessToken == e.AccessToken) {
				t.Errorf("token %q, stored before %q", tok.AccessToken, e.AccessToken)
			}
			if !srv.Valid(tok.AccessToken) {
				t.Error("the server does not accept the token handed out")
			}
			stored, _ := store.Load(k)
			if stored.AccessToken != tok.AccessToken {
				t.Error("the refreshed token was not persisted")
			}
		})
	}
}

func TestRotatedRefreshTokenIsStoredAtOnce(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{Rotate: true})
	store := tempStore(t)
	k, e := loggedIn(t, srv, store, time.Now().Add(-time.Minute))
	ts := newTokenSource(store, k, e, nil, nil)
	if _, err := ts.Token(); err != nil {
		t.Fatal(err)
	}
	// Read the file itself, as the next toolgate process would.
	stored, err := NewStore(store.Path()).Load(k)
	if err != nil {
		t.Fatal(err)
	}
	if stored.RefreshToken == e.RefreshToken || stored.RefreshToken == "" {
		t.Fatalf("stored refresh token %q: the rotated one was not persisted", stored.RefreshToken)
	}
	// The next host starts from the file and refreshes with the new token.
	stored.ExpiresAt = time.Now().Add(-time.Minute)
	next := newTokenSource(NewStore(store.Path()), k, stored, nil, nil)
	if _, err := next.Token(); err != nil {
		t.Fatalf("refresh with the stored refresh token: %v", err)
	}
	if c := srv.Counts(); c.Refreshes != 2 || c.RefusedRefreshes != 0 {
		t.Errorf("counts = %+v, want two good refreshes", c)
	}
}

// TestConcurrentHostsRefreshOnce: two hosts whose token expires at the
// same moment refresh once between them; with a rotating server, two
// refreshes would log one of them out.
func TestConcurrentHostsRefreshOnce(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{Rotate: true})
	path := filepath.Join(t.TempDir(), "credentials.json")
	k, e := loggedIn(t, srv, NewStore(path), time.Now().Add(-time.Second))
	hosts := []*tokenSource{
		newTokenSource(NewStore(path), k, e, nil, nil),
		newTokenSource(NewStore(path), k, e, nil, nil),
	}
	toks := make([]string, 2)
	var wg sync.WaitGroup
	for i, ts := range hosts {
		wg.Go(func() {
			tok, err := ts.Token()
			if err != nil {
				t.Error(err)
				return
			}
			toks[i] = tok.AccessToken
		})
	}
	wg.Wait()
	if c := srv.Counts(); c.Refreshes != 1 || c.RefusedRefreshes != 0 {
		t.Errorf("counts = %+v, want exactly one refresh", c)
	}
	if toks[0] != toks[1] || !srv.Valid(toks[0]) {
		t.Errorf("hosts hold %q and %q; want the same valid token", toks[0], toks[1])
	}
}

func unauthorized(req *http.Request, status int, challenge string) *http.Response {
	resp := &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: req}
	if challenge != "" {
		resp.Header.Set("WWW-Authenticate", challenge)
	}
	return resp
}

func bearerRequest(token string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "http://mcp.test/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	return req
}

func TestStoredHandlerAnswersARefusal(t *testing.T) {
	t.Run("a revoked token is refreshed", func(t *testing.T) {
		srv := oauthtest.New(t, oauthtest.Options{})
		store := tempStore(t)
		k, e := loggedIn(t, srv, store, time.Now().Add(time.Hour))
		h := NewStored(StoredOptions{Server: k.Server, URL: k.URL, Store: store}, e)
		srv.Revoke(e.AccessToken)
		if err := h.Authorize(ctx, bearerRequest(e.AccessToken), unauthorized(nil, 401, "Bearer")); err != nil {
			t.Fatalf("Authorize = %v, want a refresh", err)
		}
		tok := token(t, h)
		if tok == e.AccessToken || !srv.Valid(tok) {
			t.Errorf("token after Authorize = %q", tok)
		}
	})
	t.Run("another host's newer token is adopted", func(t *testing.T) {
		srv := oauthtest.New(t, oauthtest.Options{})
		store := tempStore(t)
		k, e := loggedIn(t, srv, store, time.Now().Add(time.Hour))
		h := NewStored(StoredOptions{Server: k.Server, URL: k.URL, Store: store}, e)
		newer := *e
		newer.AccessToken, newer.RefreshToken = srv.Issue()
		if err := store.Save(ctx, k, &newer); err != nil {
			t.Fatal(err)
		}
		srv.Revoke(e.AccessToken)
		if err := h.Authorize(ctx, bearerRequest(e.AccessToken), unauthorized(nil, 401, "Bearer")); err != nil {
			t.Fatal(err)
		}
		if tok := token(t, h); tok != newer.AccessToken {
			t.Errorf("token = %q, want the one the other host stored", tok)
		}
		if n := srv.Counts().Refreshes; n != 0 {
			t.Errorf("%d refreshes; adopting needs none", n)
		}
	})
	t.Run("a dead refresh token means login", func(t *testing.T) {
		srv := oauthtest.New(t, oauthtest.Options{})
		store := tempStore(t)
		k, e := loggedIn(t, srv, store, time.Now().Add(time.Hour))
		e.RefreshToken = "forgotten"
		if err := store.Save(ctx, k, e); err != nil {
			t.Fatal(err)
		}
		h := NewStored(StoredOptions{Server: k.Server, URL: k.URL, Store: store}, e)
		err := h.Authorize(ctx, bearerRequest(e.AccessToken), unauthorized(nil, 401, "Bearer"))
		var lr *LoginRequiredError
		if !errors.As(err, &lr) || !strings.Contains(err.Error(), "run `toolgate login proto`") || !strings.Contains(err.Error(), "invalid_grant") {
			t.Fatalf("Authorize = %v, want login required", err)
		}
		if strings.Contains(err.Error(), "forgotten") {
			t.Errorf("the error quotes the refresh token: %v", err)
		}
	})
	t.Run("a scope challenge means login", func(t *testing.T) {
		srv := oauthtest.New(t, oauthtest.Options{})
		store := tempStore(t)
		k, e := loggedIn(t, srv, store, time.Now().Add(time.Hour))
		h := NewStored(StoredOptions{Server: k.Server, URL: k.URL, Store: store}, e)
		err := h.Authorize(ctx, bearerRequest(e.AccessToken), unauthorized(nil, 403, `Bearer error="insufficient_scope", scope="admin"`))
		var lr *LoginRequiredError
		if !errors.As(err, &lr) || lr.Scope != "admin" {
			t.Fatalf("Authorize = %v", err)
		}
	})
}

func token(t *testing.T, h interface {
	TokenSource(context.Context) (oauth2.TokenSource, error)
}) string {
	t.Helper()
	ts, err := h.TokenSource(ctx)
	if err != nil || ts == nil {
		t.Fatalf("TokenSource = %v, %v", ts, err)
	}
	tok, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}

// followRedirects is a browser that approves at once.
func followRedirects(ctx context.Context, u string) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("callback answered %s", resp.Status)
	}
	return nil
}

// TestLoginThenRuntime: a login through the MCP client stores credentials;
// a later host uses them without a login.
func TestLoginThenRuntime(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	store := tempStore(t)
	var out bytes.Buffer
	login, err := NewLogin(LoginOptions{Server: "proto", URL: srv.URL, Store: store, Browser: followRedirects, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer login.Close()
	if n := listTools(t, srv.URL, login); n != 1 {
		t.Fatalf("listed %d tools", n)
	}
	if !login.Authorized() {
		t.Fatal("the login did not authorize")
	}
	if !strings.Contains(out.String(), srv.Issuer+"/authorize?") || !strings.Contains(out.String(), login.RedirectURL()) {
		t.Errorf("the login did not print the URL and callback:\n%s", out.String())
	}
	e, err := store.Load(Key{Server: "proto", URL: srv.URL})
	if err != nil || e == nil || !srv.Valid(e.AccessToken) || e.RefreshToken == "" || e.Resource != srv.URL {
		t.Fatalf("stored entry = %+v, %v", e, err)
	}

	runtime := NewStored(StoredOptions{Server: "proto", URL: srv.URL, Store: store}, e)
	if n := listTools(t, srv.URL, runtime); n != 1 {
		t.Fatalf("listed %d tools with the stored login", n)
	}
	if c := srv.Counts(); c.Authorizations != 1 || c.Registrations != 1 || c.CodeExchanges != 1 {
		t.Errorf("counts = %+v; the runtime handler must not log in again", c)
	}
}

func listTools(t *testing.T, url string, h interface {
	TokenSource(context.Context) (oauth2.TokenSource, error)
	Authorize(context.Context, *http.Request, *http.Response) error
}) int {
	t.Helper()
	c, err := mcpclient.New(mcpclient.Options{Name: "proto", HTTP: &mcpclient.HTTP{URL: url, OAuth: h}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Connect(t.Context()); err != nil {
		t.Fatal(err)
	}
	tools, err := c.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return len(tools)
}

func TestLoginRefusesMetadataForAnotherResource(t *testing.T) {
	var authorized bool
	mux := http.NewServeMux()
	var base string
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"resource":"https://evil.example/mcp","authorization_servers":[%q]}`, base)
	})
	mux.HandleFunc("/authorize", func(http.ResponseWriter, *http.Request) { authorized = true })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	base = srv.URL
	login, err := NewLogin(LoginOptions{Server: "x", URL: srv.URL + "/mcp", Browser: followRedirects})
	if err != nil {
		t.Fatal(err)
	}
	defer login.Close()
	err = login.Authorize(ctx, httptest.NewRequest("POST", srv.URL+"/mcp", nil), unauthorized(nil, 401, "Bearer"))
	var rm *ResourceMismatchError
	if !errors.As(err, &rm) || rm.Resource != "https://evil.example/mcp" {
		t.Fatalf("Authorize = %v, want a resource mismatch", err)
	}
	if authorized {
		t.Error("the login went on to the authorization endpoint")
	}
}

func TestCallbackIgnoresStrangers(t *testing.T) {
	cb, err := listenCallback(0)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.close()
	cb.expect("s1")
	get := func(q string) int {
		resp, err := http.Get(cb.redirect + "?" + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("state=forged&code=evil"); code != http.StatusBadRequest {
		t.Errorf("a forged callback got %d", code)
	}
	if code := get("state=s1&code=good&iss=https://as.test"); code != http.StatusOK {
		t.Errorf("the real callback got %d", code)
	}
	res, err := cb.wait(ctx, time.Second)
	if err != nil || res.Code != "good" || res.Iss != "https://as.test" {
		t.Fatalf("wait = %+v, %v", res, err)
	}
	if code := get("state=s1&code=again"); code != http.StatusBadRequest {
		t.Errorf("a replayed callback got %d", code)
	}
	cb.expect("s2")
	get("state=s2&error=access_denied&error_description=user+said+no")
	if _, err := cb.wait(ctx, time.Second); err == nil || !strings.Contains(err.Error(), "access_denied (user said no)") {
		t.Fatalf("wait = %v, want the refusal", err)
	}
}

func TestSigningKeys(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(ec)
	sec1, _ := x509.MarshalECPrivateKey(ec)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	edPKCS8, _ := x509.MarshalPKCS8PrivateKey(edKey)
	tests := []struct {
		name, typ string
		der       []byte
		alg       string
	}{
		{"EC in PKCS #8", "PRIVATE KEY", pkcs8, "ES256"},
		{"EC in SEC 1", "EC PRIVATE KEY", sec1, "ES256"},
		{"RSA in PKCS #1", "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey), "RS256"},
		{"Ed25519", "PRIVATE KEY", edPKCS8, "EdDSA"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, err := parseSigningKey(pem.EncodeToMemory(&pem.Block{Type: tc.typ, Bytes: tc.der}))
			if err != nil || k.alg != tc.alg {
				t.Fatalf("parse = %v, %v; want %s", k, err, tc.alg)
			}
			if _, err := k.sign(map[string]any{"iss": "c"}); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("ES256 signatures verify", func(t *testing.T) {
		k, _ := parseSigningKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}))
		jwt, err := k.sign(map[string]any{"iss": "client", "aud": "https://as.test"})
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(jwt, ".")
		sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
		if !verifyECDSA(&ec.PublicKey, []byte(parts[0]+"."+parts[1]), sig) {
			t.Error("the ES256 signature does not verify")
		}
	})
	if _, err := parseSigningKey([]byte("not a key")); err == nil || !strings.Contains(err.Error(), "PEM") {
		t.Errorf("parse garbage = %v", err)
	}
}

func TestStatus(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		e    Entry
		want string
	}{
		{Entry{ExpiresAt: now.Add(50 * time.Minute)}, "oauth (expires in 50m)"},
		{Entry{ExpiresAt: now.Add(26 * time.Hour)}, "oauth (expires in 26h0m)"},
		{Entry{ExpiresAt: now.Add(-time.Minute), RefreshToken: "r"}, "oauth (expired, refreshes on use)"},
		{Entry{ExpiresAt: now.Add(-time.Minute)}, "oauth (expired, login required)"},
		{Entry{}, "oauth"},
	}
	for _, tc := range tests {
		if got := Status(&tc.e, now); got != tc.want {
			t.Errorf("Status(%v) = %q, want %q", tc.e.ExpiresAt, got, tc.want)
		}
	}
}

func TestNoDisplayMeansNoBrowser(t *testing.T) {
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		t.Skip("desktops always have a browser")
	}
	env := map[string]string{"DISPLAY": "", "PATH": os.Getenv("PATH")}
	open := SystemBrowser(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err := open(ctx, "https://as.test/authorize"); !errors.Is(err, ErrNoBrowser) {
		t.Fatalf("open = %v, want ErrNoBrowser without a display", err)
	}
}
