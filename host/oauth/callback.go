package oauth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// callbackPath is where the authorization server sends the browser back.
const callbackPath = "/callback"

// callback is the loopback listener that receives the authorization
// code. It answers only the redirect carrying the state of the login in
// progress; anything else gets a 400 and is otherwise ignored, so a stray
// or forged request cannot end a login.
type callback struct {
	ln       net.Listener
	srv      *http.Server
	redirect string
	done     chan struct{} // closed when the server has stopped

	mu      sync.Mutex
	state   string // the state of the login in progress
	results chan callbackResult
}

type callbackResult struct {
	res *auth.AuthorizationResult
	err error
}

// listenCallback binds 127.0.0.1:port (0 = any free port).
func listenCallback(port int) (*callback, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		if port != 0 {
			return nil, fmt.Errorf("listening for the OAuth callback on 127.0.0.1:%d: %w (free the port or change callback_port in the oauth block)", port, err)
		}
		return nil, fmt.Errorf("listening for the OAuth callback: %w", err)
	}
	c := &callback{
		ln:       ln,
		redirect: "http://" + ln.Addr().String() + callbackPath,
		done:     make(chan struct{}),
		results:  make(chan callbackResult, 1),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+callbackPath, c.serve)
	c.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(c.done)
		_ = c.srv.Serve(ln)
	}()
	return c, nil
}

func (c *callback) serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	c.mu.Lock()
	want := c.state
	c.mu.Unlock()
	if want == "" || q.Get("state") != want {
		http.Error(w, "This is not the login toolgate is waiting for.", http.StatusBadRequest)
		return
	}
	var res callbackResult
	if e := q.Get("error"); e != "" {
		res.err = fmt.Errorf("the authorization server refused the login: %s", e)
		if d := q.Get("error_description"); d != "" {
			res.err = fmt.Errorf("the authorization server refused the login: %s (%s)", e, d)
		}
	} else if q.Get("code") == "" {
		res.err = errors.New("the authorization server sent no code")
	} else {
		res.res = &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
	}
	c.mu.Lock()
	c.state = "" // one answer per login
	c.mu.Unlock()
	select {
	case c.results <- res:
	default:
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if res.err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, "<!doctype html><title>toolgate login failed</title><p>Login failed: %s</p><p>You can close this tab.</p>", html.EscapeString(res.err.Error()))
		return
	}
	fmt.Fprint(w, "<!doctype html><title>toolgate login</title><p>Login complete. You can close this tab and return to toolgate.</p>")
}

// expect arms the callback for one login.
func (c *callback) expect(state string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state = state
	select {
	case <-c.results: // a stale answer of an earlier round
	default:
	}
}

// wait returns the code of the armed login.
func (c *callback) wait(ctx context.Context, timeout time.Duration) (*auth.AuthorizationResult, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case r := <-c.results:
		return r.res, r.err
	case <-timer.C:
		return nil, fmt.Errorf("no answer from the browser within %s: open the URL above and finish the login there, or run the command again", timeout)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *callback) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := c.srv.Shutdown(ctx)
	<-c.done
	return err
}

// stateOf reads the state parameter of an authorization URL.
func stateOf(authURL string) string {
	u, err := url.Parse(authURL)
	if err != nil {
		return ""
	}
	return u.Query().Get("state")
}

// ErrNoBrowser means there is no browser to open: print the URL instead.
var ErrNoBrowser = errors.New("no browser available")

// SystemBrowser returns a function that opens a URL in the user's
// browser: xdg-open on a Linux or BSD desktop (DISPLAY or WAYLAND_DISPLAY
// set), open on macOS, the URL handler on Windows. Without one it returns
// ErrNoBrowser and the caller relies on the printed URL.
func SystemBrowser(lookupEnv func(string) (string, bool)) func(ctx context.Context, url string) error {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	return func(ctx context.Context, target string) error {
		var name string
		var args []string
		switch runtime.GOOS {
		case "darwin":
			name, args = "open", []string{target}
		case "windows":
			name, args = "rundll32", []string{"url.dll,FileProtocolHandler", target}
		default:
			if !set(lookupEnv, "DISPLAY") && !set(lookupEnv, "WAYLAND_DISPLAY") {
				return ErrNoBrowser
			}
			name, args = "xdg-open", []string{target}
		}
		path, err := exec.LookPath(name)
		if err != nil {
			return ErrNoBrowser
		}
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		// The opener hands the URL to the browser and exits.
		return exec.CommandContext(ctx, path, args...).Run()
	}
}

func set(lookupEnv func(string) (string, bool), name string) bool {
	v, ok := lookupEnv(name)
	return ok && v != ""
}
