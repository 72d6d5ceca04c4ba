package manager_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/environment"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/launch"
	"github.com/toolgate/toolgate/host/manager"
	"github.com/toolgate/toolgate/host/mcpclient"
	"github.com/toolgate/toolgate/internal/contain"
	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testbin"
)

// TestMain makes the test binary what toolgate's main is to the processes
// it starts in-process: a possible supervisor (contain.RunSupervisorIfAsked),
// without which a server's setsid descendant escapes its cell.
func TestMain(m *testing.M) {
	contain.RunSupervisorIfAsked()
	os.Exit(testbin.Main(m))
}

// demo returns a stdio server block running mcp-demo with args.
func demo(t *testing.T, name string, args ...string) config.Server {
	t.Helper()
	return config.Server{
		Name:           name,
		Transport:      config.TransportStdio,
		Command:        testbin.Path(t, "mcp-demo"),
		Args:           args,
		Enabled:        true,
		StartupTimeout: 20 * time.Second,
		ToolTimeout:    20 * time.Second,
		Prefix:         true,
		DeclRange:      hcl.Range{Filename: "test.hcl", Start: hcl.Pos{Line: 1}},
	}
}

type fixture struct {
	m   *manager.Manager
	rec *events.Recorder
}

func start(t *testing.T, servers ...config.Server) *fixture {
	t.Helper()
	return startWith(t, func(*manager.Options) {}, servers...)
}

// startWith is start with options changed by tune.
func startWith(t *testing.T, tune func(*manager.Options), servers ...config.Server) *fixture {
	t.Helper()
	cfg := &config.Config{Servers: servers, Exposure: config.Exposure{NameLimit: 64}}
	rec := &events.Recorder{}
	opts := manager.Options{
		Events:       rec,
		Environments: environment.New(cfg, environment.Options{Local: launch.NewLocal(launch.LocalOptions{})}),
		LookupEnv:    func(k string) (string, bool) { return os.LookupEnv(k) },
		RelistDelay:  20 * time.Millisecond,
		Restart:      manager.RestartPolicy{Initial: 50 * time.Millisecond, Max: 200 * time.Millisecond},
	}
	tune(&opts)
	m := manager.New(cfg, opts)
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("closing manager: %v", err)
		}
	})
	m.Start(t.Context())
	if _, err := m.WaitStartup(t.Context()); err != nil {
		t.Fatalf("waiting for startup: %v", err)
	}
	return &fixture{m: m, rec: rec}
}

func statusOf(m *manager.Manager, name string) manager.ServerStatus {
	for _, s := range m.Status() {
		if s.Name == name {
			return s
		}
	}
	return manager.ServerStatus{}
}

func TestTwentyServersStartConcurrently(t *testing.T) {
	var servers []config.Server
	for i := range 20 {
		servers = append(servers, demo(t, fmt.Sprintf("s%02d", i)))
	}
	f := start(t, servers...)

	sum := events.Of[events.StartupComplete](f.rec)
	if len(sum) != 1 {
		t.Fatalf("got %d startup_complete events, want exactly 1", len(sum))
	}
	if len(sum[0].Ready) != 20 || len(sum[0].Failed) != 0 {
		t.Fatalf("startup summary = %+v, want 20 ready", sum[0])
	}
	// Each server reports starting, then exactly one outcome, and every
	// starting event precedes every outcome: the starts were concurrent.
	perServer := map[string][]string{}
	lastStarting, firstOutcome := -1, -1
	for i, e := range f.rec.Events() {
		ev, ok := e.(events.ServerStartup)
		if !ok {
			continue
		}
		perServer[ev.Server] = append(perServer[ev.Server], ev.Status)
		if ev.Status == events.StatusStarting {
			lastStarting = i
		} else if firstOutcome < 0 {
			firstOutcome = i
		}
	}
	for name, got := range perServer {
		if !slices.Equal(got, []string{"starting", "ready"}) {
			t.Errorf("server %s events = %v, want [starting ready]", name, got)
		}
	}
	if lastStarting > firstOutcome {
		t.Errorf("a server started only after another finished: starts were not concurrent")
	}
	if n := len(f.m.Snapshot().Tools); n < 20*15 {
		t.Errorf("catalog has %d tools, want every server's tools", n)
	}
}

func TestOptionalFailureLeavesOthersReady(t *testing.T) {
	f := start(t,
		demo(t, "good"),
		demo(t, "broken", "--exit-immediately", "7"),
	)
	if s := statusOf(f.m, "good"); s.Status != events.StatusReady {
		t.Fatalf("good server: %+v", s)
	}
	bad := statusOf(f.m, "broken")
	if bad.Status != events.StatusFailed {
		t.Fatalf("broken server: %+v", bad)
	}
	// The failure quotes what the server said and how it exited.
	for _, want := range []string{`MCP client for "broken" failed to start`, "exit status 7", "fatal: demo startup failure"} {
		if !strings.Contains(bad.Error, want) {
			t.Errorf("failure text %q lacks %q", bad.Error, want)
		}
	}
	if err := f.m.RequiredError(); err != nil {
		t.Errorf("optional failure must not fail the host: %v", err)
	}
}

func TestRequiredFailuresAggregate(t *testing.T) {
	a := demo(t, "alpha", "--fail-initialize")
	a.Required = true
	b := demo(t, "beta", "--exit-immediately", "3")
	b.Required = true
	f := start(t, demo(t, "fine"), b, a)

	err := f.m.RequiredError()
	var re *manager.RequiredError
	if !errors.As(err, &re) {
		t.Fatalf("RequiredError() = %v, want a *RequiredError", err)
	}
	re1 := regexp.MustCompile(`^required MCP servers failed to initialize: alpha: .*initialize refused by --fail-initialize.*; beta: .*exit status 3`)
	if !re1.MatchString(err.Error()) {
		t.Errorf("aggregated text = %q", err)
	}
}

func TestSilentServerConnectsWithinItsTimeout(t *testing.T) {
	// An old server that never answers server/discover: the default
	// protocol selection must not probe it, or startup would hang until
	// the timeout and fail.
	s := demo(t, "old", "--ignore-unknown")
	s.StartupTimeout = 30 * time.Second
	f := start(t, s)
	st := statusOf(f.m, "old")
	if st.Status != events.StatusReady {
		t.Fatalf("silent server: %+v", st)
	}
	if st.Protocol != mcpclient.LegacyVersion {
		t.Errorf("protocol = %q, want %q", st.Protocol, mcpclient.LegacyVersion)
	}
}

func TestStartupTimeoutNamesTheFix(t *testing.T) {
	// Forcing the modern probe on a server that ignores it hangs: the
	// timeout text must say which setting to change.
	s := demo(t, "hang", "--ignore-unknown")
	s.ProtocolVersion = mcpclient.ModernVersion
	s.StartupTimeout = 500 * time.Millisecond
	f := start(t, s)
	st := statusOf(f.m, "hang")
	want := `MCP client for "hang" timed out after 0.5 seconds. Add or adjust startup_timeout_sec in the server "hang" block (test.hcl:1).`
	if st.Status != events.StatusFailed || st.Error != want {
		t.Fatalf("status = %q error = %q, want failed with %q", st.Status, st.Error, want)
	}
}

func TestShutdownLeavesNoProcess(t *testing.T) {
	cfg := &config.Config{Servers: []config.Server{
		demo(t, "a", "--spawn-child"),
		demo(t, "b"),
		demo(t, "stubborn", "--ignore-sigterm"),
	}}
	m := manager.New(cfg, manager.Options{
		Environments: environment.New(cfg, environment.Options{
			Local: launch.NewLocal(launch.LocalOptions{StdinGrace: 100 * time.Millisecond, TermGrace: 200 * time.Millisecond}),
		}),
	})
	m.Start(t.Context())
	if _, err := m.WaitStartup(t.Context()); err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, s := range m.Status() {
		if s.Status != events.StatusReady || s.Pid == 0 {
			t.Fatalf("server not ready: %+v", s)
		}
		pids = append(pids, s.Pid)
		pids = append(pids, procwatch.GroupMembers(s.Pid)...)
	}
	if len(pids) < 4 {
		t.Fatalf("expected the spawned grandchild among the processes, got pids %v", pids)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	// Close returns once the leaders are reaped; group members die by
	// signal right after. Give them a bounded moment, then insist.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for _, pid := range pids {
		if err := procwatch.WaitGone(ctx, pid); err != nil {
			t.Errorf("process %d survived shutdown: %v", pid, err)
			_ = procwatch.Kill(pid)
		}
	}
}

func TestPagination(t *testing.T) {
	f := start(t,
		demo(t, "paged", "--no-default-tools", "--tools", "57", "--page-size", "5"),
		demo(t, "loop", "--no-default-tools", "--tools", "10", "--page-size", "3", "--repeat-cursor"),
	)
	if st := statusOf(f.m, "paged"); st.Status != events.StatusReady || st.Tools != 57 {
		t.Fatalf("paged server: %+v, want 57 tools over 12 pages", st)
	}
	st := statusOf(f.m, "loop")
	if st.Status != events.StatusFailed || !strings.Contains(st.Error, "repeated cursor") {
		t.Fatalf("repeating server: %+v, want a repeated-cursor failure", st)
	}
}

func TestFiltersApplyAtListingAndCallTime(t *testing.T) {
	s := demo(t, "f")
	s.EnabledTools = []string{"echo", "add", "delete_file"}
	s.DisabledTools = []string{"delete_file"}
	f := start(t, s)
	var names []string
	for _, ti := range f.m.Snapshot().Tools {
		names = append(names, ti.RawName())
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"add", "echo"}) {
		t.Fatalf("listed tools = %v, want [add echo]", names)
	}
	_, err := f.m.CallTool(t.Context(), "f", "delete_file", map[string]any{"path": "x"}, nil, mcpclient.CallOptions{})
	if !errors.Is(err, manager.ErrToolDisabled) || !strings.Contains(err.Error(), `tool "delete_file" is disabled for MCP server "f"`) {
		t.Errorf("call of a disabled tool: %v", err)
	}
	_, err = f.m.CallTool(t.Context(), "nope", "echo", nil, nil, mcpclient.CallOptions{})
	if !errors.Is(err, manager.ErrUnknownServer) || !strings.Contains(err.Error(), `unknown MCP server "nope"`) {
		t.Errorf("call to an unknown server: %v", err)
	}
	res, err := f.m.CallTool(t.Context(), "f", "echo", map[string]any{"text": "hi"}, nil, mcpclient.CallOptions{})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "hi" {
		t.Fatalf("echo: %v %+v", err, res)
	}
}

func TestCrashIsReportedAndServerComesBack(t *testing.T) {
	f := start(t, demo(t, "crashy", "--crash-after", "1"), demo(t, "steady"))
	before := statusOf(f.m, "crashy").Pid

	if _, err := f.m.CallTool(t.Context(), "crashy", "echo", map[string]any{"text": "1"}, nil, mcpclient.CallOptions{}); err != nil {
		t.Fatalf("first call: %v", err)
	}
	failed, err := f.rec.WaitFor(t.Context(), func(e events.Event) bool {
		s, ok := e.(events.ServerState)
		return ok && s.Server == "crashy" && s.Status == events.StatusFailed
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := failed.(events.ServerState).Error; !strings.Contains(got, "exit status 3") {
		t.Errorf("crash report = %q, want the exit status", got)
	}
	if _, err := f.rec.WaitFor(t.Context(), func(e events.Event) bool {
		s, ok := e.(events.ServerState)
		return ok && s.Server == "crashy" && s.Status == events.StatusReady && s.Restarts == 1
	}); err != nil {
		t.Fatal(err)
	}
	st := statusOf(f.m, "crashy")
	if st.Status != events.StatusReady || st.Restarts != 1 || st.Pid == before {
		t.Fatalf("after restart: %+v (old pid %d)", st, before)
	}
	if _, err := f.m.CallTool(t.Context(), "steady", "echo", map[string]any{"text": "still here"}, nil, mcpclient.CallOptions{}); err != nil {
		t.Fatalf("other server after the crash: %v", err)
	}
	if _, err := f.m.CallTool(t.Context(), "crashy", "echo", map[string]any{"text": "2"}, nil, mcpclient.CallOptions{}); err != nil {
		t.Fatalf("restarted server: %v", err)
	}
}

// TestCrashLoopKeepsBackingOff: a server that crashes soon after each
// restart is restarted later each time (the backoff keeps doubling
// instead of starting over), and its status counts the loop.
func TestCrashLoopKeepsBackingOff(t *testing.T) {
	const initial = 100 * time.Millisecond
	f := startWith(t, func(o *manager.Options) {
		o.Restart = manager.RestartPolicy{Initial: initial, Max: 10 * time.Second, StableAfter: time.Hour}
	}, demo(t, "crashy", "--crash-after", "1"))
	var gap time.Duration
	for crash := 1; crash <= 4; crash++ {
		// The call's answer is written before the server exits.
		if _, err := f.m.CallTool(t.Context(), "crashy", "echo", map[string]any{"text": "x"}, nil, mcpclient.CallOptions{}); err != nil {
			t.Fatalf("call before crash %d: %v", crash, err)
		}
		failed, err := f.rec.WaitFor(t.Context(), func(e events.Event) bool {
			s, ok := e.(events.ServerState)
			return ok && s.Server == "crashy" && s.Status == events.StatusFailed && s.Restarts == crash-1
		})
		if err != nil {
			t.Fatal(err)
		}
		ready, err := f.rec.WaitFor(t.Context(), func(e events.Event) bool {
			s, ok := e.(events.ServerState)
			return ok && s.Server == "crashy" && s.Status == events.StatusReady && s.Restarts == crash
		})
		if err != nil {
			t.Fatal(err)
		}
		gap = ready.(events.ServerState).At.Sub(failed.(events.ServerState).At)
		if got := statusOf(f.m, "crashy").CrashLoop; got != crash {
			t.Errorf("after crash %d the status counts %d crashes in a row", crash, got)
		}
	}
	// The fourth restart waited Delay(4) = 800 ms less at most 20 %
	// jitter; starting over would have waited at most 100 ms.
	if want := 8 * initial * 8 / 10; gap < want {
		t.Errorf("the restart after the 4th quick crash came %s after it, want at least %s", gap, want)
	}
}

// TestStartupTimeoutIsReportedWhenItExpires: a server that hangs in its
// handshake and ignores SIGTERM is reported failed at its startup
// timeout; killing it (stdin, grace, SIGTERM, grace, SIGKILL) finishes in
// the background, and Close still waits for it.
func TestStartupTimeoutIsReportedWhenItExpires(t *testing.T) {
	const grace = 2500 * time.Millisecond
	srv := demo(t, "stuck", "--hang-initialize", "--ignore-sigterm")
	srv.StartupTimeout = time.Second
	cfg := &config.Config{Servers: []config.Server{srv}, Exposure: config.Exposure{NameLimit: 64}}
	rec := &events.Recorder{}
	m := manager.New(cfg, manager.Options{
		Events: rec,
		Environments: environment.New(cfg, environment.Options{
			Local: launch.NewLocal(launch.LocalOptions{StdinGrace: grace, TermGrace: grace})}),
		LookupEnv: func(k string) (string, bool) { return os.LookupEnv(k) },
	})
	m.Start(t.Context())
	if _, err := m.WaitStartup(t.Context()); err != nil {
		t.Fatal(err)
	}
	ev := events.Of[events.ServerStartup](rec)
	if len(ev) != 2 || ev[1].Status != events.StatusFailed || !strings.Contains(ev[1].Error, "timed out after 1 seconds") {
		t.Fatalf("startup events = %+v, want starting then a timeout", ev)
	}
	// Waiting for the kill would take 1 s + 2 × 2.5 s.
	if took := ev[1].At.Sub(ev[0].At); took > time.Second+2*time.Second {
		t.Errorf("the timeout was reported after %s, want about 1s", took)
	}
	// Close waits for the kill (goleak, run by TestMain, would see its
	// goroutine otherwise).
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestTooManyToolsDegradesInsteadOfFailing: a server listing more tools
// than its max_tools keeps the first ones and is ready but degraded,
// with the reason in its status, instead of losing every tool.
func TestTooManyToolsDegradesInsteadOfFailing(t *testing.T) {
	big := demo(t, "big", "--no-default-tools", "--tools", "120", "--page-size", "50")
	big.MaxTools = 100
	f := start(t, big, demo(t, "small"))
	st := statusOf(f.m, "big")
	if st.Status != events.StatusReady || st.Tools != 100 {
		t.Fatalf("status = %+v, want ready with the first 100 tools", st)
	}
	if !strings.Contains(st.Degraded, "more than 100 tools") || !strings.Contains(st.Degraded, "max_tools") {
		t.Errorf("degraded = %q, want the reason and the setting to change", st.Degraded)
	}
	if statusOf(f.m, "small").Degraded != "" {
		t.Error("a server within its limit is reported degraded")
	}
}

// TestEndlessPagesDegradeInsteadOfFailing: a server whose tools/list
// returns a fresh nextCursor for ever (mcp-demo --endless-pages) keeps
// what the first MaxPages pages listed and is ready but degraded, as
// max_tools does, instead of failing with every tool lost.
func TestEndlessPagesDegradeInsteadOfFailing(t *testing.T) {
	f := start(t, demo(t, "endless", "--endless-pages"))
	st := statusOf(f.m, "endless")
	// The first page holds the default tools, every other one endless_N.
	if st.Status != events.StatusReady || st.Tools <= mcpclient.MaxPages-1 {
		t.Fatalf("status = %+v, want ready with the tools of the first %d pages", st, mcpclient.MaxPages)
	}
	if !strings.Contains(st.Degraded, fmt.Sprintf("more than %d pages", mcpclient.MaxPages)) {
		t.Errorf("degraded = %q, want the page cap named", st.Degraded)
	}
	names := map[string]bool{}
	for _, tl := range f.m.Snapshot().Tools {
		names[tl.Tool.Name] = true
	}
	if !names["echo"] || !names[fmt.Sprintf("endless_%d", mcpclient.MaxPages-1)] || names[fmt.Sprintf("endless_%d", mcpclient.MaxPages)] {
		t.Errorf("catalog lacks the first page's echo or the last kept page, or holds a page past the cap")
	}
}

func TestListChangedRefreshesCatalog(t *testing.T) {
	f := start(t, demo(t, "live"), demo(t, "late", "--add-tool-after-initialized", "latecomer"))
	has := func(name string) bool {
		for _, ti := range f.m.Snapshot().Tools {
			if ti.ModelName == name {
				return true
			}
		}
		return false
	}
	if !has("mcp__late__latecomer") {
		t.Errorf("a tool added right after initialized is missing from the startup catalog")
	}
	rev := f.m.Revision()
	if _, err := f.m.CallTool(t.Context(), "live", "mutate_tools", map[string]any{"add": []string{"fresh"}}, nil, mcpclient.CallOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.rec.WaitFor(t.Context(), func(e events.Event) bool {
		s, ok := e.(events.ServerState)
		return ok && s.Server == "live" && s.Revision > rev
	}); err != nil {
		t.Fatal(err)
	}
	if !has("mcp__live__fresh") {
		t.Errorf("catalog lacks the tool added at runtime")
	}
}

// TestListChangedStormStillRelists: a server announcing list changes
// faster than the debounce delay, without pause, is still re-listed, so
// a tool it adds during the storm reaches the catalog.
func TestListChangedStormStillRelists(t *testing.T) {
	// Notifications every 2 ms against a 1 s debounce: even a loaded
	// machine never pauses the storm long enough for the debounce alone
	// to run a relist; only the 1.5 s cap does.
	f := startWith(t, func(o *manager.Options) {
		o.RelistDelay, o.RelistMaxWait = time.Second, 1500*time.Millisecond
	}, demo(t, "stormy", "--list-changed-storm", "2ms"))
	rev := f.m.Revision()
	if _, err := f.m.CallTool(t.Context(), "stormy", "mutate_tools", map[string]any{"add": []string{"fresh"}}, nil, mcpclient.CallOptions{}); err != nil {
		t.Fatal(err)
	}
	// The storm goes on while we wait: without a cap on the debounce, no
	// relist would ever run. The deadline only bounds a failing run.
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	for {
		if _, err := f.rec.WaitFor(ctx, func(e events.Event) bool {
			s, ok := e.(events.ServerState)
			return ok && s.Server == "stormy" && s.Revision > rev
		}); err != nil {
			t.Fatalf("no re-list during a list_changed storm: %v", err)
		}
		for _, ti := range f.m.Snapshot().Tools {
			if ti.ModelName == "mcp__stormy__fresh" {
				return
			}
		}
		rev = f.m.Revision() // a relist that started before the tool was added
	}
}

func TestStreamableHTTP(t *testing.T) {
	url := httpDemo(t)
	f := start(t, config.Server{
		Name: "web", Transport: config.TransportHTTP, URL: url, Enabled: true, Prefix: true,
		StartupTimeout: 20 * time.Second, ToolTimeout: 20 * time.Second,
		HTTPHeaders: map[string]string{"X-Test": "1"},
	})
	st := statusOf(f.m, "web")
	if st.Status != events.StatusReady || st.Tools < 15 {
		t.Fatalf("http server: %+v", st)
	}
	res, err := f.m.CallTool(t.Context(), "web", "add", map[string]any{"a": 2, "b": 3}, nil, mcpclient.CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if string(b) != `{"sum":5}` {
		t.Errorf("structured result = %s", b)
	}
}

func TestHTTPAuthFailureSaysHowToLogIn(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://example.invalid/.well-known/oauth-protected-resource"`)
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	t.Cleanup(plain.Close)
	t.Setenv("TG_TEST_TOKEN", "s3cret-value")
	server := func(name, url, tokenVar string) config.Server {
		return config.Server{Name: name, Transport: config.TransportHTTP, URL: url, Enabled: true,
			StartupTimeout: 10 * time.Second, BearerTokenEnvVar: tokenVar}
	}
	f := start(t, server("oauth", srv.URL, ""), server("tok", plain.URL, "TG_TEST_TOKEN"))

	if got := statusOf(f.m, "oauth").Error; !strings.Contains(got, "is not logged in. Run `toolgate login oauth`") {
		t.Errorf("401 with a challenge: %q", got)
	}
	got := statusOf(f.m, "tok").Error
	if !strings.Contains(got, "rejected the token in TG_TEST_TOKEN") {
		t.Errorf("401 with a configured token: %q", got)
	}
	for _, s := range f.m.Status() {
		if strings.Contains(s.Error, "s3cret-value") {
			t.Errorf("a secret leaked into an error: %q", s.Error)
		}
	}
}

// httpDemo runs mcp-demo --http on a free port and returns its URL.
func httpDemo(t *testing.T) string {
	t.Helper()
	p, err := launch.NewLocal(launch.LocalOptions{}).Launch(t.Context(), launch.Spec{
		Server: "web", Command: testbin.Path(t, "mcp-demo"), Args: []string{"--http", "127.0.0.1:0"},
		Env: []string{"PATH=" + os.Getenv("PATH")}, Dir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill(); _ = p.Wait(context.Background()) })
	url, err := procwatch.WaitLine(t.Context(), p.Stderr(), regexp.MustCompile(`listening on (http://\S+)`))
	if err != nil {
		t.Fatal(err)
	}
	return url
}

// TestFailedStartIsRetriedWithBackoff: a server whose first start fails
// is started again like a crashed one, and its status counts the
// retries. Its handshake waits on a gate the test breaks the first time
// and opens the second.
func TestFailedStartIsRetriedWithBackoff(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	late := demo(t, "late", "--initialize-gate", ln.Addr().String())
	late.RetryStartup = true
	broke := make(chan error, 1)
	go func() { // the first attempt: break the gate
		c, err := ln.Accept()
		if err == nil {
			err = c.Close()
		}
		broke <- err
	}()
	f := start(t, late)
	if err := <-broke; err != nil {
		t.Fatal(err)
	}
	if st := statusOf(f.m, "late"); st.Status != events.StatusFailed {
		t.Fatalf("after the first attempt: %+v, want failed", st)
	}
	c, err := ln.Accept() // the retry
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.rec.WaitFor(t.Context(), func(e events.Event) bool {
		s, ok := e.(events.ServerState)
		return ok && s.Server == "late" && s.Status == events.StatusReady
	}); err != nil {
		t.Fatal(err)
	}
	st := statusOf(f.m, "late")
	if st.Status != events.StatusReady || st.StartupRetries != 1 || st.Restarts != 0 {
		t.Fatalf("after the retry: %+v, want ready after 1 startup retry and no restart", st)
	}
	if _, err := f.m.CallTool(t.Context(), "late", "echo", map[string]any{"text": "hi"}, nil, mcpclient.CallOptions{}); err != nil {
		t.Fatalf("calling the retried server: %v", err)
	}
}

// TestSettlingUntilEveryServerEndedItsFirstStart: Settling and
// WaitSettled (what toolgate serve's first list waits on) hold while an
// enabled server is in its first handshake, whatever a disabled server
// does, and end once it is ready.
func TestSettlingUntilEveryServerEndedItsFirstStart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	off := demo(t, "off")
	off.Enabled = false
	cfg := &config.Config{Servers: []config.Server{demo(t, "fast"), demo(t, "late", "--initialize-gate", ln.Addr().String()), off},
		Exposure: config.Exposure{NameLimit: 64}}
	m := manager.New(cfg, manager.Options{
		Environments: environment.New(cfg, environment.Options{Local: launch.NewLocal(launch.LocalOptions{})}),
		LookupEnv:    func(k string) (string, bool) { return os.LookupEnv(k) },
	})
	t.Cleanup(func() { _ = m.Close() })
	if !m.Settling() {
		t.Fatal("Settling is false before Start")
	}
	m.Start(t.Context())
	c, err := ln.Accept() // late is in its handshake, and stays there
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !m.Settling() {
		t.Fatal("Settling is false while late is in its first handshake")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := m.WaitSettled(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitSettled while late starts, with its context ended = %v, want context.Canceled", err)
	}
	if _, err := c.Write([]byte{1}); err != nil { // late may finish now
		t.Fatal(err)
	}
	if err := m.WaitSettled(t.Context()); err != nil {
		t.Fatal(err)
	}
	if m.Settling() {
		t.Fatal("Settling is true after every server settled")
	}
	if st := statusOf(m, "late"); st.Status != events.StatusReady {
		t.Fatalf("late after WaitSettled: %+v, want ready", st)
	}
}
