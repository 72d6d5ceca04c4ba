package mcpclient

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// credentials are what a server block may send: a static Authorization,
// a configured secret header, or an OAuth token go-sdk adds.
type credentialCase struct {
	name   string
	header http.Header
	oauth  bool
}

var credentialCases = []credentialCase{
	{name: "static headers", header: http.Header{"Authorization": {"Bearer static-s3cret"}, "X-Api-Key": {"key-s3cret"}}},
	{name: "oauth token", oauth: true},
}

func (cc credentialCase) options() HTTP {
	h := HTTP{Header: cc.header}
	if cc.oauth {
		h.OAuth = &fakeOAuth{token: "oauth-s3cret"}
	}
	return h
}

// credentialed reports whether r carries every credential of the case.
func credentialed(r *http.Request, oauth bool) bool {
	if oauth {
		return r.Header.Get("Authorization") == "Bearer oauth-s3cret"
	}
	return r.Header.Get("Authorization") == "Bearer static-s3cret" && r.Header.Get("X-Api-Key") == "key-s3cret"
}

// TestSameOriginRedirectKeepsCredentials: a server that moved its
// endpoint on the same origin (308 and 307, two hops) is followed, POSTs
// included, with the credentials on every hop.
func TestSameOriginRedirectKeepsCredentials(t *testing.T) {
	for _, cc := range credentialCases {
		t.Run(cc.name, func(t *testing.T) {
			srv := echoServer()
			sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
				&mcp.StreamableHTTPOptions{JSONResponse: true})
			mux := http.NewServeMux()
			mux.Handle("/old", http.RedirectHandler("/older", http.StatusPermanentRedirect))
			mux.Handle("/older", http.RedirectHandler("/mcp", http.StatusTemporaryRedirect))
			mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
				if !credentialed(r, cc.oauth) {
					w.Header().Set("WWW-Authenticate", "Bearer")
					http.Error(w, "no credentials", http.StatusUnauthorized)
					return
				}
				if r.Method == http.MethodGet {
					w.WriteHeader(http.StatusMethodNotAllowed)
					return
				}
				sdk.ServeHTTP(w, r)
			})
			ts := httptest.NewServer(mux)
			t.Cleanup(func() { ts.Close(); closeSessions(srv) })

			c := connected(t, ts.URL+"/old", cc.options())
			if got, err := echo(t.Context(), c, "moved"); err != nil || got != "moved" {
				t.Fatalf("echo through the redirect = %q, %v", got, err)
			}
		})
	}
}

// TestCrossOriginRedirectNeverGetsCredentials: a redirect to another
// origin is refused with a RedirectError naming both origins, and the
// other origin never receives a request, let alone a credential.
func TestCrossOriginRedirectNeverGetsCredentials(t *testing.T) {
	for _, cc := range credentialCases {
		t.Run(cc.name, func(t *testing.T) {
			var (
				mu   sync.Mutex
				seen []http.Header
			)
			evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				seen = append(seen, r.Header.Clone())
				mu.Unlock()
				http.Error(w, "gotcha", http.StatusTeapot)
			}))
			t.Cleanup(evil.Close)
			home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, evil.URL+"/mcp?stolen=1", http.StatusTemporaryRedirect)
			}))
			t.Cleanup(home.Close)

			err := httpClient(t, home.URL+"/mcp", cc.options()).Connect(t.Context())
			var re *RedirectError
			if !errors.As(err, &re) || re.Problem != redirectCrossOrigin {
				t.Fatalf("Connect = %v, want a cross-origin RedirectError", err)
			}
			if !strings.Contains(err.Error(), origin(mustURL(t, evil.URL))) || strings.Contains(err.Error(), "stolen") {
				t.Errorf("the error should name the other origin, and no path or query: %v", err)
			}
			for _, secret := range []string{"s3cret"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error quotes a credential: %v", err)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) != 0 {
				t.Errorf("the other origin received %d request(s), first with headers %v", len(seen), seen[0])
			}
		})
	}
}

// TestRedirectLimits: a POST turned into a GET (303) and a redirect loop
// are refused with a text that names the fix.
func TestRedirectLimits(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/see-other", http.RedirectHandler("/mcp", http.StatusSeeOther))
	mux.Handle("/loop", http.RedirectHandler("/loop", http.StatusTemporaryRedirect))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	for path, problem := range map[string]string{"/see-other": redirectMethod, "/loop": redirectTooMany} {
		err := httpClient(t, ts.URL+path, HTTP{}).Connect(t.Context())
		var re *RedirectError
		if !errors.As(err, &re) || re.Problem != problem || !strings.Contains(err.Error(), "set url in its server block") {
			t.Errorf("%s: Connect = %v, want a %s RedirectError", path, err, problem)
		}
	}
}

func TestOrigin(t *testing.T) {
	same := [][2]string{
		{"http://a.example/mcp", "HTTP://A.example:80/other?q=1"},
		{"https://a.example/mcp", "https://a.example:443/"},
	}
	for _, p := range same {
		if origin(mustURL(t, p[0])) != origin(mustURL(t, p[1])) {
			t.Errorf("%s and %s should be one origin", p[0], p[1])
		}
	}
	other := [][2]string{
		{"http://a.example/mcp", "https://a.example/mcp"},
		{"http://a.example/mcp", "http://a.example:8080/mcp"},
		{"http://a.example/mcp", "http://evil.a.example/mcp"},
	}
	for _, p := range other {
		if origin(mustURL(t, p[0])) == origin(mustURL(t, p[1])) {
			t.Errorf("%s and %s should be different origins", p[0], p[1])
		}
	}
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
