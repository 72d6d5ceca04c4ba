package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/host/cli"
	"github.com/toolgate/toolgate/host/oauth"
	"github.com/toolgate/toolgate/host/oauth/oauthtest"
)

// TestLoginAsANewUser: `toolgate login` on a machine without a browser
// says what to do; the test plays the user, opening the printed URL the
// way a browser would (the authorization server approves at once with a
// redirect, which is then followed to the loopback callback). Afterwards
// `toolgate servers` uses the stored login, and `toolgate logout` forgets it.
func TestLoginAsANewUser(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	creds := filepath.Join(t.TempDir(), "toolgate", "credentials.json")
	conf := writeConfig(t, fmt.Sprintf(`server "proto" {
  url = %q
}
`, srv.URL))
	env := map[string]string{oauth.CredentialsEnv: creds, "DISPLAY": "", "WAYLAND_DISPLAY": ""}

	// Before the login: the server refuses us, and we say how to fix it.
	r := run(t, env, "servers", "--config", conf)
	if r.code != cli.ExitDegraded || !strings.Contains(r.stdout, "login required") || !strings.Contains(r.stdout, "Run `toolgate login proto`") {
		t.Fatalf("servers before login: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	pr, pw := io.Pipe()
	var out bytes.Buffer
	done := make(chan int, 1)
	go func() {
		defer pw.Close()
		done <- cli.Run(t.Context(), []string{"login", "proto", "--config", conf, "--no-browser", "--timeout", "20s"}, cli.IO{
			In: strings.NewReader(""), Out: &out, Err: pw, LookupEnv: lookup(env),
		})
	}()
	printed := &lines{}
	authURL := readURL(t, pr, printed)

	// The user's browser: the authorization server answers with a
	// redirect to the loopback callback; follow it by hand.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp := get(t, noRedirect, authURL)
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorization URL answered %s", resp.Status)
	}
	callback := resp.Header.Get("Location")
	if !strings.HasPrefix(callback, "http://127.0.0.1:") {
		t.Fatalf("redirected to %q, want the loopback callback", callback)
	}
	if resp := get(t, http.DefaultClient, callback); resp.StatusCode != http.StatusOK {
		t.Fatalf("callback answered %s", resp.Status)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("login exited %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), printed.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("login did not finish after the callback")
	}
	if !strings.Contains(out.String(), "Logged in to proto: 1 tools available. Credentials saved in "+creds) {
		t.Errorf("login output:\n%s", out.String())
	}
	if !strings.Contains(printed.String(), "Waiting for the authorization server to send the browser back to http://127.0.0.1:") {
		t.Errorf("login instructions:\n%s", printed.String())
	}
	fi, err := os.Stat(creds)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v, %v", fi, err)
	}

	// A new host uses the login without asking again.
	r = run(t, env, "servers", "--config", conf)
	if r.code != 0 || !regexp.MustCompile(`proto\s+ready\s.*oauth \(expires in \d+m\)`).MatchString(r.stdout) {
		t.Fatalf("servers after login: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if c := srv.Counts(); c.Authorizations != 1 {
		t.Errorf("counts = %+v, want one authorization", c)
	}

	r = run(t, env, "logout", "proto", "--config", conf)
	if r.code != 0 || r.stdout != "Removed the stored login for proto.\n" {
		t.Fatalf("logout: %+v", r)
	}
	if r := run(t, env, "logout", "proto", "--config", conf); r.stdout != "No stored login for proto.\n" {
		t.Errorf("second logout: %+v", r)
	}
	if r := run(t, env, "servers", "--config", conf); !strings.Contains(r.stdout, "login required") {
		t.Errorf("servers after logout:\n%s", r.stdout)
	}
}

func TestLoginUsageErrors(t *testing.T) {
	conf := writeConfig(t, `server "local" { command = "MCP_DEMO" }
server "remote" { url = "http://127.0.0.1:1/mcp" }
`)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"login", "nope"}, `no server "nope" in the configuration (servers with a url: remote)`},
		{[]string{"login", "local"}, `server "local" runs a local command; login is for servers with a url`},
		{[]string{"logout", "nope"}, `no server "nope"`},
	} {
		r := run(t, map[string]string{oauth.CredentialsEnv: filepath.Join(t.TempDir(), "c.json")}, append(tt.args, "--config", conf)...)
		if r.code != cli.ExitUsage || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
}

func lookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if v, ok := env[k]; ok {
			return v, v != ""
		}
		if k == "TOOLGATE_CONFIG" || k == "XDG_CONFIG_HOME" {
			return "", false
		}
		return os.LookupEnv(k)
	}
}

var urlLine = regexp.MustCompile(`^\s+(https?://\S+/authorize\?\S+)$`)

// lines collects what the login prints, for goroutines to share.
type lines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lines) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(s + "\n")
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// readURL reads the login's instructions until the authorization URL and
// keeps collecting the rest in the background.
func readURL(t *testing.T, r io.Reader, seen *lines) string {
	t.Helper()
	found := make(chan string, 1)
	go func() {
		defer close(found)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			seen.add(sc.Text())
			if m := urlLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case u, ok := <-found:
		if !ok {
			t.Fatalf("login printed no authorization URL:\n%s", seen)
		}
		return u
	case <-time.After(20 * time.Second):
		t.Fatalf("login printed no authorization URL in time:\n%s", seen)
	}
	return ""
}

func get(t *testing.T, c *http.Client, u string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, u, nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp
}
