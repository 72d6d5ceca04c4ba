package mcpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/launch"
	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testbin"
)

func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }

// pipeLauncher is a unit-test launcher: instead of a process it serves an
// in-process go-sdk server over pipes.
type pipeLauncher struct {
	server *mcp.Server
	wg     sync.WaitGroup
}

func (l *pipeLauncher) Launch(ctx context.Context, _ launch.Spec) (launch.Process, error) {
	cr, sw := io.Pipe() // server → client
	sr, cw := io.Pipe() // client → server
	p := &pipeProcess{r: cr, w: cw, done: make(chan struct{})}
	ss, err := l.server.Connect(ctx, &mcp.IOTransport{Reader: sr, Writer: sw}, nil)
	if err != nil {
		return nil, err
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		_ = ss.Wait()
		_ = sw.Close()
		p.once.Do(func() { close(p.done) })
	}()
	p.ss = ss
	return p, nil
}

type pipeProcess struct {
	r    *io.PipeReader
	w    *io.PipeWriter
	ss   *mcp.ServerSession
	once sync.Once
	done chan struct{}
}

func (p *pipeProcess) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *pipeProcess) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p *pipeProcess) Close() error {
	_ = p.w.Close()
	_ = p.r.Close()
	_ = p.ss.Close()
	<-p.done
	return nil
}
func (p *pipeProcess) Stderr() io.Reader { return strings.NewReader("") }
func (p *pipeProcess) Wait(ctx context.Context) error {
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
func (p *pipeProcess) Kill() error { return p.Close() }
func (p *pipeProcess) Pid() int    { return 0 }

func newPipeClient(t *testing.T, srv *mcp.Server, opts Options) *Client {
	t.Helper()
	l := &pipeLauncher{server: srv}
	opts.Name = "fake"
	opts.Stdio = &Stdio{Launcher: l}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Close()
		l.wg.Wait()
	})
	return c
}

func TestCallTimeoutPausesWhileElicitationWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
		mcp.AddTool(srv, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: &jsonschemaObject})
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action}}}, nil, nil
		})
		human := 10 * time.Second // far longer than the call's timeout
		c := newPipeClient(t, srv, Options{Handlers: Handlers{
			Elicit: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				select {
				case <-time.After(human):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
			},
		}})
		if err := c.Connect(t.Context()); err != nil {
			t.Fatal(err)
		}
		res, err := c.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask"}, CallOptions{Timeout: time.Second})
		if err != nil {
			t.Fatalf("a call waiting on a human must not time out: %v", err)
		}
		if got := res.Content[0].(*mcp.TextContent).Text; got != "accept" {
			t.Fatalf("result = %q", got)
		}
	})
}

var jsonschemaObject = map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "string"}}}

func TestActiveTimerArithmetic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g pauseGroup
		var fired atomic.Bool
		start := time.Now()
		var firedAt time.Time
		done := make(chan struct{})
		tm := g.start(time.Second, func() { firedAt = time.Now(); fired.Store(true); close(done) })
		defer g.stop(tm)

		time.Sleep(400 * time.Millisecond) // fake clock: 0.4 s of active time
		g.begin()
		time.Sleep(time.Hour) // paused: does not count
		synctest.Wait()
		if fired.Load() {
			t.Fatal("timer fired while paused")
		}
		g.end()
		<-done
		if got := firedAt.Sub(start); got != time.Hour+time.Second {
			t.Fatalf("fired after %v, want 1h (paused) + 1s (active)", got)
		}
	})
}

func TestAutoFallsBackToModernWhenLegacyIsRefused(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "modern-only", Version: "1"}, nil)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "initialize" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "initialize is gone"}
			}
			return next(ctx, method, req)
		}
	})
	c := newPipeClient(t, srv, Options{})
	if err := c.Connect(t.Context()); err != nil {
		t.Fatalf("connect: %v", err)
	}
	if got := c.InitializeResult().ProtocolVersion; got < ModernVersion {
		t.Fatalf("negotiated %q, want the modern protocol after the legacy refusal", got)
	}
}

func TestExplicitVersionIsValidated(t *testing.T) {
	_, err := New(Options{Name: "x", Stdio: &Stdio{}, ProtocolVersion: "2099-01-01"})
	if err == nil || !strings.Contains(err.Error(), `unsupported protocol_version "2099-01-01"`) {
		t.Fatalf("New = %v", err)
	}
	if _, err := New(Options{Name: "x"}); err == nil {
		t.Fatal("a client with no transport must be refused")
	}
}

// demoClient connects to a real mcp-demo process through the local launcher.
func demoClient(t *testing.T, args ...string) *Client {
	t.Helper()
	return demoClientWith(t, Options{}, args...)
}

// demoClientWith is demoClient with opts' Logger and MaxTools.
func demoClientWith(t *testing.T, opts Options, args ...string) *Client {
	t.Helper()
	c := newDemoClient(t, opts, args...)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

// newDemoClient is an unconnected client for mcp-demo with args, named
// "demo", with opts' Logger, MaxTools and Handlers; it is closed at cleanup.
func newDemoClient(t *testing.T, opts Options, args ...string) *Client {
	t.Helper()
	env, err := launch.BuildEnv(os.LookupEnv, nil, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{Name: "demo", Logger: opts.Logger, MaxTools: opts.MaxTools, Handlers: opts.Handlers, Stdio: &Stdio{
		Launcher: launch.NewLocal(launch.LocalOptions{}),
		Spec:     launch.Spec{Server: "demo", Command: testbin.Path(t, "mcp-demo"), Args: args, Env: env, Dir: t.TempDir()},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestTimeoutCancelsTheServerCall(t *testing.T) {
	log, lines, stop, err := procwatch.LineFIFO(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	c := demoClient(t, "--call-log", log)
	_, err = c.CallTool(t.Context(), &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 60000}},
		CallOptions{Timeout: 200 * time.Millisecond})
	var te *TimeoutError
	if !errors.As(err, &te) || err.Error() != "timed out awaiting tools/call after 0.2s" {
		t.Fatalf("err = %v, want the timeout text", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Error("a timeout should match context.DeadlineExceeded")
	}
	// The server hears notifications/cancelled: its handler stops and the
	// call log records it.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		select {
		case l := <-lines:
			if strings.Contains(l, `"event":"cancelled"`) {
				return
			}
		case <-ctx.Done():
			t.Fatal("the server never recorded the cancellation")
		}
	}
}

// TestStrayResponsesDoNotEndTheSession: a real server that follows every
// answer with a response carrying "id": null and one without an id stays
// connected and callable; the strays are counted.
func TestStrayResponsesDoNotEndTheSession(t *testing.T) {
	c := demoClient(t, "--stray-responses")
	for i := range 3 {
		res, err := c.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}, CallOptions{})
		if err != nil {
			t.Fatalf("call %d after stray responses: %v", i, err)
		}
		if res.IsError {
			t.Fatalf("call %d: error result %+v", i, res.Content)
		}
	}
	// initialize, tools/list and three calls were answered, each followed
	// by two strays; the last pair may still be on its way.
	if got := c.strays.Load(); got < 8 {
		t.Errorf("counted %d stray responses, want at least 8", got)
	}
}

func TestProgressReachesTheCaller(t *testing.T) {
	c := demoClient(t)
	got := make(chan float64, 16)
	_, err := c.CallTool(t.Context(), &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": 3}},
		CallOptions{OnProgress: func(p *mcp.ProgressNotificationParams) { got <- p.Progress }})
	if err != nil {
		t.Fatal(err)
	}
	// The server sends them before its result, so all three must have
	// been delivered by the time the result is: a gateway forwards them
	// upstream and late ones would be lost.
	if n := len(got); n != 3 {
		t.Fatalf("received %d progress notifications before the result, want 3", n)
	}
}

func TestCrashEndsTheSessionWithItsReason(t *testing.T) {
	c := demoClient(t, "--crash-after", "1")
	if _, err := c.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}, CallOptions{}); err != nil {
		t.Fatal(err)
	}
	<-c.Done()
	var ee *ExitError
	if err := c.Err(); !errors.As(err, &ee) || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("Err() = %v, want an ExitError with the exit status", err)
	}
	if c.State() != StateClosed {
		t.Fatalf("state = %v", c.State())
	}
	_, err := c.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo"}, CallOptions{})
	if !errors.As(err, &ee) {
		t.Fatalf("a call after the crash: %v, want the crash reason", err)
	}
}

// TestCrashDuringACallSaysWhy: a server that dies in the middle of a
// call fails that call with the server's name, its exit status and the
// last lines of its stderr, not a bare EOF; the session's end says the same.
func TestCrashDuringACallSaysWhy(t *testing.T) {
	c := demoClient(t, "--crash-tool")
	_, err := c.CallTool(t.Context(), &mcp.CallToolParams{Name: "crash"}, CallOptions{})
	var ee *ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("call in flight during a crash: %v, want the crash reason (an ExitError)", err)
	}
	for _, want := range []string{`MCP server "demo" stopped`, "exit status 3", "panic: crashing on purpose"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("call error %q lacks %q", err, want)
		}
	}
	<-c.Done()
	if !strings.Contains(c.Err().Error(), "panic: crashing on purpose") {
		t.Errorf("the session's end %q lacks the stderr tail", c.Err())
	}
}

func TestListingLimits(t *testing.T) {
	t.Run("too many tools keeps the first", func(t *testing.T) {
		c := demoClientWith(t, Options{MaxTools: 50}, "--no-default-tools", "--tools", "60", "--page-size", "25")
		tools, err := c.ListTools(t.Context())
		var tooMany *TooManyToolsError
		if !errors.As(err, &tooMany) || !errors.Is(err, ErrCatalogLimit) || !strings.Contains(err.Error(), "max_tools") {
			t.Fatalf("ListTools = %v, want a TooManyToolsError naming max_tools", err)
		}
		if len(tools) != 50 || tools[0].Name != "gen_00001" || tools[49].Name != "gen_00050" {
			t.Fatalf("kept %d tools, want the first 50", len(tools))
		}
	})
	t.Run("too many pages", func(t *testing.T) {
		c := demoClient(t, "--no-default-tools", "--tools", fmt.Sprint(MaxPages+1), "--page-size", "1")
		_, err := c.ListTools(t.Context())
		if !errors.Is(err, ErrCatalogLimit) || !strings.Contains(err.Error(), fmt.Sprintf("more than %d pages", MaxPages)) {
			t.Fatalf("ListTools = %v", err)
		}
	})
	t.Run("exactly at the limits", func(t *testing.T) {
		c := demoClientWith(t, Options{MaxTools: MaxPages}, "--no-default-tools", "--tools", fmt.Sprint(MaxPages), "--page-size", "1")
		tools, err := c.ListTools(t.Context())
		if err != nil || len(tools) != MaxPages {
			t.Fatalf("ListTools = %d tools, %v", len(tools), err)
		}
	})
}

func TestLifecycleErrors(t *testing.T) {
	c := demoClient(t)
	if err := c.Connect(t.Context()); err == nil || !strings.Contains(err.Error(), "already ready") {
		t.Fatalf("second Connect = %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close is idempotent: %v", err)
	}
	if _, err := c.ListTools(t.Context()); !errors.Is(err, ErrClosed) {
		t.Fatalf("ListTools after Close = %v", err)
	}
	if c.Err() != nil {
		t.Fatalf("a closed client did not crash: Err() = %v", c.Err())
	}
}

func TestTailBufferKeepsTheLastLines(t *testing.T) {
	tb := newTailBuffer(3, 40)
	for _, l := range []string{"one", "two", "three", "four", strings.Repeat("x", 100)} {
		_, _ = tb.Write([]byte(l + "\n"))
	}
	got := tb.String()
	if strings.Contains(got, "one") || !strings.HasPrefix(got, "…") || len(got) > 40+len("…") {
		t.Fatalf("tail = %q", got)
	}
}

func TestAuthChallengesAreRead(t *testing.T) {
	for _, tt := range []struct {
		status    int
		headers   []string
		challenge bool
		scope     string
	}{
		{401, nil, false, ""},
		{401, []string{`Bearer resource_metadata="https://x/.well-known/oauth-protected-resource"`}, true, ""},
		{403, []string{`Basic realm="x"`, `Bearer error="insufficient_scope", scope="repo:write"`}, true, "repo:write"},
		{403, []string{`Bearer error="insufficient_scope"`}, true, "(unspecified)"},
	} {
		resp := &http.Response{StatusCode: tt.status, Header: http.Header{"Www-Authenticate": tt.headers}}
		e := authErrorFrom(resp)
		if e.Challenge != tt.challenge || e.Scope != tt.scope {
			t.Errorf("%d %v: got challenge=%v scope=%q", tt.status, tt.headers, e.Challenge, e.Scope)
		}
	}
}

// demoOverHTTP starts mcp-demo serving Streamable HTTP with spec's
// arguments and returns its URL; it is killed when the test ends.
func demoOverHTTP(t *testing.T, spec launch.Spec) string {
	t.Helper()
	spec.Args = append(slices.Clone(spec.Args), "--http", "127.0.0.1:0")
	p, err := launch.NewLocal(launch.LocalOptions{}).Launch(t.Context(), spec)
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

func TestProgressOverHTTPArrivesBeforeTheResult(t *testing.T) {
	env, _ := launch.BuildEnv(os.LookupEnv, nil, nil, false)
	url := demoOverHTTP(t, launch.Spec{Server: "web", Command: testbin.Path(t, "mcp-demo"), Env: env, Dir: t.TempDir()})
	c, err := New(Options{Name: "web", HTTP: &HTTP{URL: url}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Connect(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := make(chan float64, 16)
	if _, err := c.CallTool(t.Context(), &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": 4}},
		CallOptions{OnProgress: func(p *mcp.ProgressNotificationParams) { got <- p.Progress }}); err != nil {
		t.Fatal(err)
	}
	if n := len(got); n != 4 {
		t.Fatalf("received %d progress notifications before the result, want 4", n)
	}
}

// TestServerLogMessagesArriveBeforeTheResult: the host asks for log
// messages (logging/setLevel), and one the server sends during a call is
// handed over before the call returns, so the gateway still knows whose
// call it belongs to.
func TestServerLogMessagesArriveBeforeTheResult(t *testing.T) {
	env, _ := launch.BuildEnv(os.LookupEnv, nil, nil, false)
	spec := launch.Spec{Server: "demo", Command: testbin.Path(t, "mcp-demo"), Args: []string{"--log-messages"}, Env: env, Dir: t.TempDir()}
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			got := make(chan *mcp.LoggingMessageParams, 4)
			opts := Options{Name: "demo", Handlers: Handlers{Log: func(_ context.Context, p *mcp.LoggingMessageParams) { got <- p }}}
			if transport == "stdio" {
				opts.Stdio = &Stdio{Launcher: launch.NewLocal(launch.LocalOptions{}), Spec: spec}
			} else {
				opts.HTTP = &HTTP{URL: demoOverHTTP(t, spec)}
			}
			c, err := New(opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Close() })
			if err := c.Connect(t.Context()); err != nil {
				t.Fatal(err)
			}
			if _, err := c.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}, CallOptions{}); err != nil {
				t.Fatal(err)
			}
			select {
			case p := <-got:
				if p.Level != "info" {
					t.Errorf("level = %q", p.Level)
				}
			default:
				t.Fatal("the server's log message had not arrived when the call returned")
			}
		})
	}
}

// A server that prints its own credentials on stderr and then fails: the
// log and the startup error show everything but the credential.
func TestServerSecretsStayOutOfLogsAndErrors(t *testing.T) {
	const token = "ghp_0123456789abcdefSECRET"
	var logs bytes.Buffer
	log := hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Debug, JSONFormat: true})
	c, err := New(Options{Name: "leaky", Logger: log, Stdio: &Stdio{
		Launcher: launch.NewLocal(launch.LocalOptions{}),
		Spec: launch.Spec{Server: "leaky", Command: "/bin/sh",
			Args: []string{"-c", `echo "starting with GITHUB_TOKEN=$GITHUB_TOKEN" >&2; echo "stdout: $GITHUB_TOKEN"; exit 3`},
			Env:  []string{"PATH=/usr/bin:/bin", "GITHUB_TOKEN=" + token}, Dir: t.TempDir()},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	err = c.Connect(ctx)
	var se *StartError
	if !errors.As(err, &se) {
		t.Fatalf("Connect = %v, want a StartError", err)
	}
	if !strings.Contains(se.Stderr, "starting with GITHUB_TOKEN=[REDACTED]") {
		t.Errorf("stderr tail = %q, want the line with the token redacted", se.Stderr)
	}
	if !strings.Contains(logs.String(), "starting with GITHUB_TOKEN=[REDACTED]") {
		t.Errorf("the server's stderr line was not logged (redacted):\n%s", logs.String())
	}
	for what, text := range map[string]string{"error": err.Error(), "log": logs.String()} {
		if strings.Contains(text, "0123456789abcdef") {
			t.Errorf("the %s shows the server's token:\n%s", what, text)
		}
	}
}

// TestOneBadToolCostsOnlyItself: a listing with a tool whose name is a
// number and one whose name holds a lone UTF-16 surrogate keeps every
// other tool; each skipped tool is logged with its index and problem,
// and a name listed twice is logged too.
func TestOneBadToolCostsOnlyItself(t *testing.T) {
	logs := &testbin.Buffer{}
	c := demoClientWith(t, Options{Logger: hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Warn})}, "--bad-tools")
	ctx := t.Context()
	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatalf("one bad tool failed the whole listing: %v", err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
		if strings.ContainsRune(tool.Name, '\uFFFD') {
			t.Errorf("tool %q was kept, but its name cannot be sent back", tool.Name)
		}
	}
	for _, want := range []string{"echo", "add", "write_file"} {
		if !slices.Contains(names, want) {
			t.Errorf("tool %s is missing after a bad tool was skipped: %v", want, names)
		}
	}
	for _, want := range []string{
		"skipping a tool the server listed: it is not a valid tool", "index_in_page=0",
		"skipping a tool the server listed: its name", "index_in_page=1",
		`the server lists two tools with the same name`, `tool="\"echo\""`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
}

// TestStderrFloodKeepsTheLogSmallAndTheTailWhole: a server that floods
// stderr before failing gets a bounded number of its lines logged plus a
// count of the rest, while its startup error still quotes its very last
// lines.
func TestStderrFloodKeepsTheLogSmallAndTheTailWhole(t *testing.T) {
	const flood = 5000
	logs := &testbin.Buffer{}
	c := newDemoClient(t, Options{Logger: hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Info})},
		"--stderr-flood", fmt.Sprint(flood), "--exit-immediately", "4")
	err := c.Connect(t.Context())
	var se *StartError
	if !errors.As(err, &se) || !strings.Contains(se.Stderr, fmt.Sprintf("flood line %d", flood-1)) {
		t.Fatalf("Connect = %v, want a StartError quoting the last flood line", err)
	}
	logged := strings.Count(logs.String(), "mcp-demo: flood line")
	if logged > launch.StderrBurst+launch.StderrLinesPerSec*60 || logged >= flood {
		t.Errorf("%d of %d flood lines were logged one by one", logged, flood)
	}
	if !strings.Contains(logs.String(), "suppressed") {
		t.Errorf("the log does not say lines were suppressed:\n%.2000s", logs.String())
	}
}

// TestTooDeepCostsOnlyItself: a tool whose input schema nests 500
// levels (over 1000 JSON levels, past go-sdk's decoder) is skipped with
// a warning giving its index and the real reason, the server's other
// tools stay; a result nested 1500 levels fails that call with an error
// saying so, and the next call on the same session works.
func TestTooDeepCostsOnlyItself(t *testing.T) {
	logs := &testbin.Buffer{}
	c := demoClientWith(t, Options{Logger: hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Warn})},
		"--deep-schema", "500", "--deep-result", "1500")
	ctx := t.Context()
	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatalf("one deep tool failed the whole listing: %v", err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	if slices.Contains(names, "deep_schema") || !slices.Contains(names, "echo") || !slices.Contains(names, "deep_result") {
		t.Errorf("tools = %v, want echo and deep_result without deep_schema", names)
	}
	for _, want := range []string{"skipping a tool the server listed: its definition nests 100", "index_in_page=0"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
	_, err = c.CallTool(ctx, &mcp.CallToolParams{Name: "deep_result", Arguments: map[string]any{}}, CallOptions{})
	if err == nil || !strings.Contains(err.Error(), "levels deep, more than the 1000 levels") || strings.Contains(err.Error(), "not a JSON-RPC") {
		t.Fatalf("deep result: err = %v, want the nesting named", err)
	}
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "still here"}}, CallOptions{})
	if err != nil || res.IsError {
		t.Fatalf("the session did not survive the deep result: %v %v", res, err)
	}
}

// TestHugeDescriptionsAreCut: three 4 MiB descriptions (mcp-demo
// --huge-descriptions) are cut to the cap with a marker and a warning
// naming the tool and the setting; with the default cap and a
// configured one.
func TestHugeDescriptionsAreCut(t *testing.T) {
	for _, limit := range []int{0, 1000} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			logs := &testbin.Buffer{}
			c := newDemoClient(t, Options{Logger: hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Warn})},
				"--no-default-tools", "--huge-descriptions")
			c.opts.MaxDescriptionBytes = limit
			if err := c.Connect(t.Context()); err != nil {
				t.Fatal(err)
			}
			tools, err := c.ListTools(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			want := limit
			if want == 0 {
				want = DefaultMaxDescriptionBytes
			}
			if len(tools) != 3 {
				t.Fatalf("got %d tools, want 3", len(tools))
			}
			for _, tool := range tools {
				if len(tool.Description) > want || !strings.HasSuffix(tool.Description, truncationMarker) ||
					!strings.HasPrefix(tool.Description, "Huge description") {
					t.Errorf("%s: description of %d bytes (cap %d), ending %q", tool.Name, len(tool.Description), want,
						tool.Description[max(0, len(tool.Description)-40):])
				}
			}
			for _, w := range []string{`tool="\"huge_1\""`, "description of 4194304 bytes cut to", "max_description_bytes"} {
				if !strings.Contains(logs.String(), w) {
					t.Errorf("log lacks %q:\n%.2000s", w, logs.String())
				}
			}
		})
	}
}
