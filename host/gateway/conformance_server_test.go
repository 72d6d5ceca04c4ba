package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/internal/testwait"
)

// TestConformanceServerSuiteThroughServe runs the MCP conformance server
// suite against go-sdk's conformance fixture server directly and through
// `toolgate serve --http` with a prefix = false server block and
// forward_sampling: every scenario that passes directly passes through
// the gateway, resources, prompts, completions, sampling and SEP-1330
// elicitations included.
func TestConformanceServerSuiteThroughServe(t *testing.T) {
	interop := testbin.Interop(t)
	fixture := testbin.Path(t, "testplugins/everything-server")

	// Directly: the fixture over stateful Streamable HTTP.
	port := freePort(t)
	cmd := procwatch.DieWithTest(exec.Command(fixture, "-http", "127.0.0.1:"+port, "-stateless=false"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	if _, err := procwatch.WaitLine(t.Context(), stderr, regexp.MustCompile(`listening at (\S+)`)); err != nil {
		t.Fatal(err)
	}
	waitAccepting(t, "127.0.0.1:"+port)
	direct := runServerSuite(t, interop, "http://127.0.0.1:"+port+"/")

	// Through toolgate serve, the fixture as its only (stdio) server. Each
	// scenario's session may start before the fixture is ready: its first
	// request waits for it (serve { initial_list_wait }). Servers may
	// sample the calling client (serve { forward_sampling }).
	cfg := writeConfig(t, "serve {\n  initial_list_wait = \"5m\"\n  forward_sampling = true\n}\n", fmt.Sprintf("server %q {\n  command = %q\n  prefix = false\n  default_tools_approval_mode = \"approve\"\n}\n", "everything", fixture))
	p := startServe(t, nil, "--http", "127.0.0.1:0", "--config", cfg)
	through := runServerSuite(t, interop, p.url(t))

	var names []string
	for name := range direct {
		names = append(names, name)
	}
	sort.Strings(names)
	passed := 0
	for _, name := range names {
		if !direct[name].ok {
			t.Errorf("scenario %s fails against the fixture itself: %s", name, direct[name].why)
			continue
		}
		got, ran := through[name]
		switch {
		case !ran:
			t.Errorf("scenario %s did not run through toolgate", name)
		case !got.ok:
			t.Errorf("scenario %s passes directly but fails through toolgate: %s", name, got.why)
		default:
			passed++
		}
	}
	for _, prefix := range []string{"resources-", "prompts-", "completion-"} {
		found := false
		for _, name := range names {
			found = found || strings.HasPrefix(name, prefix)
		}
		if !found {
			t.Errorf("the suite ran no %s* scenario", prefix)
		}
	}
	t.Logf("%d scenarios pass directly; %d pass through toolgate serve", len(names), passed)
}

type scenarioResult struct {
	ok  bool
	why string
}

// runServerSuite runs `conformance server --suite active` against url and
// reads every scenario's checks.json: a scenario passes when none of its
// checks failed.
func runServerSuite(t *testing.T, interop, url string) map[string]scenarioResult {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npx", "--no", "conformance", "server", "--url", url, "--suite", "active", "-o", out)
	cmd.Dir = interop
	cmd.Env = append(os.Environ(),
		"PATH="+filepath.Join(interop, "node_modules", ".bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"NO_COLOR=1")
	procwatch.OwnGroup(cmd)
	cmd.Cancel = func() error { return procwatch.KillGroup(cmd.Process.Pid) }
	cmd.WaitDelay = 5 * time.Second
	output, _ := cmd.CombinedOutput() // non-zero when a scenario fails; the checks say which
	if ctx.Err() != nil {
		t.Fatalf("conformance server suite against %s: %v\n%s", url, ctx.Err(), output)
	}
	dirs, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	stamp := regexp.MustCompile(`^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$`)
	res := map[string]scenarioResult{}
	for _, d := range dirs {
		m := stamp.FindStringSubmatch(d.Name())
		if m == nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(out, d.Name(), "checks.json"))
		if err != nil {
			t.Fatalf("scenario %s wrote no checks: %v\n%s", m[1], err, output)
		}
		var checks []struct {
			ID           string `json:"id"`
			Status       string `json:"status"`
			ErrorMessage string `json:"errorMessage"`
		}
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatal(err)
		}
		r := scenarioResult{ok: true}
		for _, c := range checks {
			if c.Status == "FAILURE" || c.Status == "ERROR" {
				r.ok = false
				r.why += fmt.Sprintf("%s: %s; ", c.ID, c.ErrorMessage)
			}
		}
		res[m[1]] = r
	}
	if len(res) == 0 {
		t.Fatalf("the conformance suite ran no scenario against %s:\n%s", url, output)
	}
	return res
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

// waitAccepting waits until addr accepts connections: the fixture logs
// that it listens just before it does.
func waitAccepting(t *testing.T, addr string) {
	t.Helper()
	d := net.Dialer{Timeout: time.Second}
	ctx := testwait.Context(t)
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			_ = c.Close()
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("the fixture never accepted connections at %s within %v: %v", addr, testwait.Bound(), err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
}
