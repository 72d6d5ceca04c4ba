package gateway_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/gateway"
	"github.com/toolgate/toolgate/host/manager"
	"github.com/toolgate/toolgate/host/telemetry"
	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testwait"
)

// opsServer serves the gateway's /metrics, /healthz and /readyz the way
// toolgate serve does.
func opsServer(t *testing.T, m *telemetry.Metrics, gw *gateway.Gateway) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(telemetry.OpsHandler(m, gw.Ready))
	t.Cleanup(srv.Close)
	return srv
}

// get returns the status and body of GET url.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestMetricsCountCallsDecisionsAndSessions scrapes /metrics after real
// calls through the gateway to a real server.
func TestMetricsCountCallsDecisionsAndSessions(t *testing.T) {
	var m *telemetry.Metrics
	var gw *gateway.Gateway
	m = telemetry.NewMetrics(telemetry.MetricsOptions{Sessions: func() int { return gw.Sessions() }})
	f := newFixtureWith(t, fixtureOptions{sinks: []events.Sink{m}}, "",
		// The client shows no forms: slow_write, which needs approval,
		// is denied.
		demoServer(t, "demo", filepath.Join(t.TempDir(), "calls"), ""))
	gw = f.gw
	ops := opsServer(t, m, f.gw)
	cs := f.connectHTTP(t, nil)

	for range 2 {
		if res := call(t, cs, "mcp__demo__echo", map[string]any{"text": "hi"}); res.IsError {
			t.Fatalf("echo: %s", text(res))
		}
	}
	if res := call(t, cs, "mcp__demo__slow_write", map[string]any{"ms": 1}); !res.IsError {
		t.Fatal("slow_write was not denied")
	}

	code, body := get(t, ops.URL+telemetry.PathMetrics)
	if code != http.StatusOK {
		t.Fatalf("/metrics answered %d: %s", code, body)
	}
	got := scrapedSeries(t, body)
	want := map[string]float64{
		`toolgate_tool_calls_total{outcome="completed",server="demo",tool="echo"}`:                 2,
		`toolgate_tool_calls_total{outcome="denied",server="demo",tool="slow_write"}`:              1,
		`toolgate_tool_call_duration_seconds_count{outcome="completed",server="demo",tool="echo"}`: 2,
		`toolgate_approval_decisions_total{step="annotations",verdict="approved"}`:                 2,
		`toolgate_approval_decisions_total{step="user",verdict="denied"}`:                          1,
		`toolgate_server_up{server="demo"}`:                                                        1,
		`toolgate_sessions`:                                                                        1,
	}
	for series, v := range want {
		if g, ok := got[series]; !ok || g != v {
			t.Errorf("/metrics: %s = %v (present %v), want %v", series, g, ok, v)
		}
	}
	// Every call is counted once: no other tool_calls series.
	for series := range got {
		if strings.HasPrefix(series, telemetry.MetricCalls+"{") {
			if _, ok := want[series]; !ok {
				t.Errorf("/metrics has an unexpected series %s", series)
			}
		}
	}
	if _, ok := got["go_goroutines"]; !ok {
		t.Error("/metrics lacks the Go runtime metrics (go_goroutines)")
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", grepLines(body, "toolgate_"))
	}
}

// scrapedSeries parses a Prometheus text exposition into its series (the
// name and labels exactly as written) and their values, so that checks
// compare whole values: a count of 2 must not match a line saying 20.
func scrapedSeries(t *testing.T, body string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for line := range strings.SplitSeq(body, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			t.Fatalf("/metrics line %q has no value", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("/metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

func grepLines(s, prefix string) string {
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		if strings.HasPrefix(line, prefix) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// TestReadinessFlipsWhenARequiredServerDies: /readyz answers 200 while
// the required server runs, and 503 naming it once its process died;
// /healthz stays 200.
func TestReadinessFlipsWhenARequiredServerDies(t *testing.T) {
	m := telemetry.NewMetrics(telemetry.MetricsOptions{})
	dir := t.TempDir()
	f := newFixtureWith(t, fixtureOptions{sinks: []events.Sink{m},
		// It stays down: the test looks at readiness while it is.
		restart: manager.RestartPolicy{Initial: time.Hour}}, "",
		demoServer(t, "vital", filepath.Join(dir, "v"), "required = true\n  default_tools_approval_mode = \"approve\"", "--crash-tool"),
		demoServer(t, "extra", filepath.Join(dir, "e"), "default_tools_approval_mode = \"approve\"", "--crash-tool"))
	ops := opsServer(t, m, f.gw)
	down := make(chan string, 4)
	f.h.Bus.AddSink(events.SinkFunc(func(e events.Event) {
		if s, ok := e.(events.ServerState); ok && s.Status == events.StatusFailed {
			down <- s.Server
		}
	}))
	cs := f.connectHTTP(t, nil)
	wait := func(server string) {
		t.Helper()
		if got := testwait.Recv(t, down, "%s to go down", server); got != server {
			t.Fatalf("%s went down, want %s", got, server)
		}
	}

	if code, body := get(t, ops.URL+telemetry.PathReadyz); code != http.StatusOK {
		t.Fatalf("/readyz with every server up = %d %q, want 200", code, body)
	}

	// An optional server dying leaves the replica ready.
	_, _ = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__extra__crash", Arguments: map[string]any{}})
	wait("extra")
	if code, body := get(t, ops.URL+telemetry.PathReadyz); code != http.StatusOK {
		t.Fatalf("/readyz after an optional server died = %d %q, want 200", code, body)
	}

	_, _ = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__vital__crash", Arguments: map[string]any{}})
	wait("vital")
	code, body := get(t, ops.URL+telemetry.PathReadyz)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "vital") || strings.Contains(body, "extra") {
		t.Errorf("/readyz after the required server died = %d %q, want 503 naming vital only", code, body)
	}
	if code, _ := get(t, ops.URL+telemetry.PathHealthz); code != http.StatusOK {
		t.Errorf("/healthz = %d, want 200: the process is up", code)
	}
	_, body = get(t, ops.URL+telemetry.PathMetrics)
	if v, ok := scrapedSeries(t, body)[`toolgate_server_up{server="vital"}`]; !ok || v != 0 {
		t.Errorf("/metrics does not show vital down:\n%s", grepLines(body, "toolgate_server"))
	}
}

// TestDrainLetsACallInFlightFinish: when serving ends (SIGTERM), a call
// waiting for its approval form keeps going until the user answered, new
// sessions are refused and readiness fails meanwhile, and the call's
// result reaches the client.
func TestDrainLetsACallInFlightFinish(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{gateway: gateway.Options{DrainGrace: time.Minute}}, "")
	drains := make(chan events.Draining, 1)
	f.h.Bus.AddSink(events.SinkFunc(func(e events.Event) {
		if d, ok := e.(events.Draining); ok {
			drains <- d
		}
	}))
	srvURL, stop, served := serveHTTP(t, f.gw)

	asked, release := make(chan struct{}), make(chan struct{})
	cs := connectURL(t, srvURL, &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		close(asked)
		<-release
		return decide("allow"), nil
	}})
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: gated, Arguments: map[string]any{"ms": 1}})
		done <- outcome{res, err}
	}()
	<-asked // the call is in flight, waiting for its user

	stop() // what SIGTERM does to toolgate serve
	var d events.Draining
	select {
	case d = <-drains:
	case out := <-done:
		t.Fatalf("the call ended (%v, %q) without a drain", out.err, text(out.res))
	}
	if d.InFlight < 1 || d.Grace <= 0 {
		t.Errorf("draining event = %+v, want the call in flight and a grace period", d)
	}
	if err := f.gw.Ready(); !errors.Is(err, gateway.ErrNotReady) {
		t.Errorf("Ready while draining = %v, want ErrNotReady", err)
	}
	if _, err := connect(t, srvURL, nil, -1); err == nil {
		t.Error("a new session was opened while draining")
	}

	close(release)
	out := <-done
	if out.err != nil || out.res.IsError {
		t.Fatalf("the call in flight = %v, %v; want its result", out.err, text(out.res))
	}
	if err := <-served; err != nil {
		t.Errorf("ServeHTTP after the drain: %v", err)
	}
	if calls := serverCalls(t, f.calls); len(calls) != 1 || calls[0] != "slow_write" {
		t.Errorf("server received %v, want the drained call", calls)
	}
}

// TestDrainGraceEndsACallThatDoesNotFinish: a call still running when the
// grace period ends is cancelled, and serving stops.
func TestDrainGraceEndsACallThatDoesNotFinish(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{gateway: gateway.Options{DrainGrace: time.Millisecond}}, "")
	srvURL, stop, served := serveHTTP(t, f.gw)
	asked := make(chan struct{})
	cs := connectURL(t, srvURL, &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		close(asked)
		<-ctx.Done() // the user never answers
		return nil, ctx.Err()
	}})
	done := make(chan error, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: gated, Arguments: map[string]any{"ms": 1}})
		if err == nil && !res.IsError {
			err = errors.New("the call succeeded")
		} else {
			err = nil
		}
		done <- err
	}()
	<-asked
	stop()
	if err := <-served; err != nil {
		t.Errorf("ServeHTTP: %v", err)
	}
	if err := <-done; err != nil {
		t.Error(err)
	}
	if calls := serverCalls(t, f.calls); len(calls) != 0 {
		t.Errorf("server received %v; the unapproved call must not run", calls)
	}
}

// serveHTTP runs gw.ServeHTTP on a loopback port. stop ends its context
// as SIGTERM does; served yields ServeHTTP's return.
func serveHTTP(t *testing.T, gw *gateway.Gateway) (url string, stop func(), served <-chan error) {
	t.Helper()
	e, err := gateway.NewEndpoint(config.Serve{}, "127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", e.Addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc, ended := make(chan error, 1), make(chan struct{})
	go func() {
		defer close(ended)
		errc <- gw.ServeHTTP(ctx, ln, e)
	}()
	t.Cleanup(func() {
		cancel()
		<-ended
	})
	return gateway.URL(e, ln.Addr()), cancel, errc
}

// connect opens a session at url. With retries < 0 the client gives up at
// the first failure (a refused session); otherwise it reconnects its
// event stream as go-sdk does by default, so that the stream closing
// after a drain cannot race the last result on its way.
func connect(t *testing.T, url string, opts *mcp.ClientOptions, retries int) (*mcp.ClientSession, error) {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, opts)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: tr}, MaxRetries: retries}, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

func connectURL(t *testing.T, url string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, err := connect(t, url, opts, 0)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestTraceOfACallJoinsTheClientsTrace: a call carrying a W3C
// traceparent in _meta becomes a span of the client's trace, with its
// approval step and the downstream call as child spans.
func TestTraceOfACallJoinsTheClientsTrace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	f := newFixtureWith(t, fixtureOptions{sinks: []events.Sink{telemetry.NewTracer(tp)}}, "")
	cs := f.connectHTTP(t, nil)

	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__demo__echo", Arguments: map[string]any{"text": "hi"},
		Meta: mcp.Meta{"traceparent": "00-" + traceID + "-" + parentID + "-01"}})
	if err != nil || res.IsError {
		t.Fatalf("echo: %v %s", err, text(res))
	}
	spans := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		spans[s.Name()] = s
	}
	root, ok := spans["tools/call mcp__demo__echo"]
	if !ok {
		t.Fatalf("no call span among %v", slices.Collect(maps.Keys(spans)))
	}
	if got := root.SpanContext().TraceID().String(); got != traceID {
		t.Errorf("call span trace = %s, want the client's %s", got, traceID)
	}
	if got := root.Parent().SpanID().String(); got != parentID {
		t.Errorf("call span parent = %s, want the client's span %s", got, parentID)
	}
	for _, name := range []string{"approval annotations", "downstream demo/echo"} {
		s, ok := spans[name]
		if !ok {
			t.Errorf("no %q span among %v", name, slices.Collect(maps.Keys(spans)))
			continue
		}
		if s.Parent().SpanID() != root.SpanContext().SpanID() {
			t.Errorf("%q is not a child of the call span", name)
		}
		if s.StartTime().Before(root.StartTime()) || s.EndTime().After(root.EndTime()) {
			t.Errorf("%q (%v..%v) lies outside the call span (%v..%v)", name, s.StartTime(), s.EndTime(), root.StartTime(), root.EndTime())
		}
	}
}

// TestAReadOnlyConfigIsNeverWritten: with the config read-only (a
// ConfigMap), the approval form does not offer "don't ask me again" (go-sdk
// then refuses that answer from the client), and the file is left as it
// was.
func TestAReadOnlyConfigIsNeverWritten(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{readOnlyConfig: true}, "")
	before, err := os.ReadFile(f.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	a := &answerer{answers: []*mcp.ElicitResult{decide("allow")}}
	cs := f.connectHTTP(t, &mcp.ClientOptions{ElicitationHandler: a.handler})
	if res := call(t, cs, gated, map[string]any{"ms": 1}); res.IsError {
		t.Fatalf("call: %s", text(res))
	}
	prompts := a.prompts()
	if len(prompts) != 1 {
		t.Fatalf("asked %d times, want 1", len(prompts))
	}
	schema, _ := prompts[0].RequestedSchema.(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	decision, _ := props["decision"].(map[string]any)
	enum, _ := decision["enum"].([]any)
	if !slices.Contains(enum, any("allow_session")) || slices.Contains(enum, any("allow_always")) {
		t.Errorf("choices for a read-only config = %v, want allow_session and no allow_always", enum)
	}
	after, err := os.ReadFile(f.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Errorf("the read-only config was rewritten:\n%s", after)
	}
}

// TestShutdownAnswersACallItCuts: a call still running on the server
// when the drain grace ends gets a real answer on its stream (a tool
// error saying the gateway is shutting down and the call may or may not
// have run), not a stream that closes without one, and the server is
// sent notifications/cancelled for it.
func TestShutdownAnswersACallItCuts(t *testing.T) {
	// The server's own call log, read as it is written, says when the call
	// runs: a log message sent upstream by the server could come on a
	// stream the client does not read, so it is no signal.
	fifo, lines, stopLines, err := procwatch.LineFIFO(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopLines)
	f := newFixtureWith(t, fixtureOptions{gateway: gateway.Options{DrainGrace: time.Millisecond}}, "",
		demoServer(t, "demo", fifo, ""))
	srvURL, stop, served := serveHTTP(t, f.gw)
	// No standalone GET stream: when the gateway stops, go-sdk's client
	// fails every pending call as soon as that stream ends, racing the
	// cut call's answer on its own POST stream, which is what this test
	// is about.
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srvURL, HTTPClient: &http.Client{Transport: tr},
		MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__demo__slow", Arguments: map[string]any{"ms": 3600000}})
		done <- outcome{res, err}
	}()
	waitEvent(t, lines, "call", "slow")

	stop() // SIGTERM
	out := testwait.Recv(t, done, "the cut call's answer")
	if out.err != nil {
		t.Fatalf("the cut call got no answer: %v", out.err)
	}
	if !out.res.IsError || text(out.res) != gateway.ShutdownCutText {
		t.Errorf("the cut call's answer = %q (isError %v), want the shutdown tool error", text(out.res), out.res.IsError)
	}
	if err := <-served; err != nil {
		t.Errorf("ServeHTTP: %v", err)
	}
	// The server is told to cancel the call it was running.
	waitEvent(t, lines, "cancel_notification", "")
}
