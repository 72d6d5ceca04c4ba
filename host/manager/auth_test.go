package manager_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/oauth"
	"github.com/toolgate/toolgate/host/oauth/oauthtest"
)

func remote(name, url string) config.Server {
	return config.Server{Name: name, Transport: config.TransportHTTP, URL: url, Enabled: true,
		StartupTimeout: 10 * time.Second, ToolTimeout: 10 * time.Second, Prefix: true}
}

// credentials points the manager at a fresh credentials file.
func credentials(t *testing.T) *oauth.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "credentials.json")
	t.Setenv(oauth.CredentialsEnv, path)
	return oauth.NewStore(path)
}

func login(t *testing.T, store *oauth.Store, srv *oauthtest.Server, name string, expires time.Time) *oauth.Entry {
	t.Helper()
	access, refresh := srv.Issue()
	e := &oauth.Entry{ClientID: "c", TokenURL: srv.Issuer + "/token", AuthStyle: "params",
		AccessToken: access, TokenType: "Bearer", RefreshToken: refresh, ExpiresAt: expires}
	if err := store.Save(context.Background(), oauth.Key{Server: name, URL: srv.URL}, e); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestRemoteServersAuthenticate(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{ClientID: "m2m", ClientSecret: "m2m-secret"})
	store := credentials(t)
	login(t, store, srv, "stored", time.Now().Add(time.Hour))
	expired := login(t, store, srv, "expired", time.Now().Add(-time.Minute))
	// A stored login that would fail: the bearer token must win over it.
	_ = store.Save(context.Background(), oauth.Key{Server: "bearer", URL: srv.URL}, &oauth.Entry{AccessToken: "revoked"})
	token, _ := srv.Issue()
	t.Setenv("TG_TEST_BEARER", token)
	t.Setenv("TG_TEST_M2M_SECRET", "m2m-secret")

	bearer := remote("bearer", srv.URL)
	bearer.BearerTokenEnvVar = "TG_TEST_BEARER"
	m2m := remote("m2m", srv.URL)
	m2m.OAuth = &config.OAuth{Grant: "client_credentials", ClientID: "m2m", ClientSecretEnvVar: "TG_TEST_M2M_SECRET"}
	f := start(t, remote("fresh", srv.URL), remote("stored", srv.URL), remote("expired", srv.URL), bearer, m2m)

	tests := []struct {
		server, status, auth, errText string
	}{
		{"fresh", events.StatusFailed, "login required", "is not logged in. Run `toolgate login fresh`"},
		{"stored", events.StatusReady, "oauth (expires in 59m)", ""},
		{"expired", events.StatusReady, "oauth (expires in 59m)", ""},
		{"bearer", events.StatusReady, "bearer", ""},
		{"m2m", events.StatusReady, "client credentials", ""},
	}
	for _, tc := range tests {
		t.Run(tc.server, func(t *testing.T) {
			st := statusOf(f.m, tc.server)
			if st.Status != tc.status || st.Auth != tc.auth || !strings.Contains(st.Error, tc.errText) {
				t.Errorf("status = %q, auth = %q, error = %q\nwant %q, %q, %q", st.Status, st.Auth, st.Error, tc.status, tc.auth, tc.errText)
			}
		})
	}
	// The expired login was refreshed before initialize, and persisted.
	now, _ := store.Load(oauth.Key{Server: "expired", URL: srv.URL})
	if now.AccessToken == expired.AccessToken || !srv.Valid(now.AccessToken) {
		t.Errorf("the expired token was not refreshed and stored")
	}
	if c := srv.Counts(); c.Authorizations != 0 || c.ClientGrants != 1 {
		t.Errorf("counts = %+v: a host never starts a login, and m2m takes one grant", c)
	}
}

func TestCorruptCredentialsAreReported(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	open := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		return mcp.NewServer(&mcp.Implementation{Name: "open", Version: "1"}, nil)
	}, nil))
	t.Cleanup(open.Close)
	store := credentials(t)
	_ = os.MkdirAll(filepath.Dir(store.Path()), 0o700)
	if err := os.WriteFile(store.Path(), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := start(t, remote("locked", srv.URL), remote("open", open.URL))

	st := statusOf(f.m, "locked")
	for _, want := range []string{"needs a login", store.Path(), "is corrupt", "toolgate login"} {
		if !strings.Contains(st.Error, want) {
			t.Errorf("error %q does not say %q", st.Error, want)
		}
	}
	if st.Auth != "credentials file corrupt" {
		t.Errorf("auth = %q", st.Auth)
	}
	// A server that needs no login is not held hostage by the file.
	if st := statusOf(f.m, "open"); st.Status != events.StatusReady {
		t.Errorf("open server: %+v", st)
	}
}

func TestClientCredentialsSecretMustBeSet(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	credentials(t)
	s := remote("m2m", srv.URL)
	s.OAuth = &config.OAuth{Grant: "client_credentials", ClientID: "m2m", ClientSecretEnvVar: "TG_TEST_UNSET_SECRET"}
	f := start(t, s)
	if got := statusOf(f.m, "m2m").Error; !strings.Contains(got, "Environment variable TG_TEST_UNSET_SECRET for the client secret of MCP server 'm2m' is not set") {
		t.Errorf("error = %q", got)
	}
}
