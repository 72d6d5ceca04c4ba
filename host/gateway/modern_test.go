package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/gateway"
	"github.com/toolgate/toolgate/host/mcpclient"
	"github.com/toolgate/toolgate/host/tokenauth/tokenauthtest"
	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/internal/testwait"
)

// discoverRequest is a 2026-07-28 server/discover as go-sdk's client
// sends it.
const discoverRequest = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{` +
	`"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientInfo":{"name":"probe","version":"1"},` +
	`"io.modelcontextprotocol/clientCapabilities":{}}}}`

// discoverResult is what the tests read of a server/discover answer.
type discoverResult struct {
	Result struct {
		SupportedVersions []string `json:"supportedVersions"`
	} `json:"result"`
	Error json.RawMessage `json:"error"`
}

// sseData returns the JSON of the first message of an answer, sent as
// JSON or as an event stream.
func sseData(t *testing.T, body string) string {
	t.Helper()
	if strings.HasPrefix(strings.TrimSpace(body), "{") {
		return body
	}
	for line := range strings.Lines(body) {
		if data, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data: "); ok {
			return data
		}
	}
	t.Fatalf("no message in the answer: %q", body)
	return ""
}

// TestServeOffersEveryVersionOnEveryTransport: server/discover answers
// the same versions over HTTP as over stdio, 2026-07-28 among them, and
// a go-sdk client at its default (2026-07-28) lists, calls, and is asked
// for approval through `toolgate serve --http` with a token, its client
// name in the audit records and in the session's log line.
func TestServeOffersEveryVersionOnEveryTransport(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	cfg := writeConfig(t, "audit_log = \""+filepath.Join(dir, "audit.jsonl")+"\"\nserve {\n  token_env_var = \"TG_TEST_TOKEN\"\n  initial_list_wait = \"5m\"\n}\n",
		demoServer(t, "demo", calls, ""))

	// stdio: the first line toolgate writes answers the discover.
	stdio := startServe(t, nil, "--config", cfg)
	if _, err := io.WriteString(stdio.stdin, discoverRequest+"\n"); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdio.stdout)
		sc.Buffer(nil, 1<<20)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var overStdio discoverResult
	if err := json.Unmarshal([]byte(testwait.Recv(t, lines, "the stdio answer to server/discover")), &overStdio); err != nil || len(overStdio.Error) > 0 {
		t.Fatalf("stdio discover: %v %s", err, overStdio.Error)
	}
	_ = stdio.stdin.Close()

	p := startServe(t, []string{"TG_TEST_TOKEN=s3cret-token"}, "--http", "127.0.0.1:0", "--log-level", "info", "--config", cfg)
	url := p.url(t)
	resp, body := send(t, url, discoverRequest, map[string]string{"Authorization": "Bearer s3cret-token", "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP discover: %s %s", resp.Status, body)
	}
	var overHTTP discoverResult
	if err := json.Unmarshal([]byte(sseData(t, body)), &overHTTP); err != nil || len(overHTTP.Error) > 0 {
		t.Fatalf("HTTP discover: %v %s", err, body)
	}
	if !slices.Contains(overStdio.Result.SupportedVersions, "2026-07-28") {
		t.Errorf("stdio does not offer 2026-07-28: %v", overStdio.Result.SupportedVersions)
	}
	if diff := cmp.Diff(overStdio.Result.SupportedVersions, overHTTP.Result.SupportedVersions); diff != "" {
		t.Errorf("versions offered over HTTP differ from stdio's (-stdio +http):\n%s", diff)
	}
	if status, _ := send(t, url, discoverRequest, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}); status.StatusCode != http.StatusUnauthorized {
		t.Errorf("a 2026-07-28 request without the token: %s, want 401", status.Status)
	}

	a := &answerer{answers: []*mcp.ElicitResult{decide("allow")}}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c := mcp.NewClient(&mcp.Implementation{Name: "modern-client", Version: "7"}, &mcp.ClientOptions{ElicitationHandler: a.handler})
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: bearer{token: "s3cret-token", base: tr}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s over HTTP, want 2026-07-28", v)
	}
	if cs.ID() != "" {
		t.Errorf("a 2026-07-28 client got session id %q", cs.ID())
	}
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(list.Tools, func(tl *mcp.Tool) bool { return tl.Name == "mcp__demo__echo" }) {
		t.Fatalf("tools/list lacks mcp__demo__echo")
	}
	if res := call(t, cs, "mcp__demo__echo", map[string]any{"text": "hi"}); res.IsError || text(res) != "hi" {
		t.Fatalf("echo: %v %q", res.IsError, text(res))
	}
	// Approval in rounds: the call ends its request with the form, the
	// client retries with the answer, the call goes on.
	if res := call(t, cs, gated, map[string]any{"ms": 1}); res.IsError {
		t.Fatalf("approved call: %q", text(res))
	}
	if n := len(a.prompts()); n != 1 {
		t.Fatalf("asked %d times, want once", n)
	} else if m := a.prompts()[0].Message; !strings.Contains(m, "Tool: slow_write (called as "+gated+")") {
		t.Errorf("the approval form does not name the call: %q", m)
	}
	if got := serverCalls(t, calls); !slices.Equal(got, []string{"echo", "slow_write"}) {
		t.Errorf("server received %v", got)
	}
	p.waitLine(t, regexp.MustCompile(`upstream session started.*client=modern-client.*protocol=2026-07-28`))

	// Stop serve so that the audit log is complete.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.exitCode(t); code != 0 {
		t.Errorf("exit code %d", code)
	}
	var ends []string
	for _, r := range readAudit(t, dir) {
		if r.Event == "tool_call_end" {
			if r.Client == nil || r.Client.Name != "modern-client" {
				t.Errorf("the audit record of %s does not name the client: %+v", r.ModelName, r.Client)
			}
			ends = append(ends, r.ModelName)
		}
	}
	if !slices.Equal(ends, []string{"mcp__demo__echo", gated}) {
		t.Errorf("audited call ends %v", ends)
	}
}

// TestModernSessionsAreOnesOfTheCallerAndClient: a 2026-07-28 client
// over HTTP has no session id; toolgate keeps one session per caller
// and client. A grant "for this session" serves later calls of the same
// caller's client, never another caller's, nor another client's.
func TestModernSessionsAreOnesOfTheCallerAndClient(t *testing.T) {
	iss := tokenauthtest.New(t)
	f := newFixture(t, fmt.Sprintf("serve {\n  auth {\n    issuer   = %q\n    resource = %q\n  }\n}\n", iss.URL, testResource))
	url := f.httpServer(t, f.h.Config().Serve, nil).URL
	token := func(sub string) string {
		return iss.Token(t, "k1", tokenauthtest.Claims{Subject: sub, Audience: []string{testResource}})
	}
	a := &answerer{answers: []*mcp.ElicitResult{decide("allow_session"), {Action: "decline"}, {Action: "decline"}}}
	connect := func(tok, client string) *mcp.ClientSession {
		tr := &http.Transport{}
		t.Cleanup(tr.CloseIdleConnections)
		c := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1"}, &mcp.ClientOptions{ElicitationHandler: a.handler})
		cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url + gateway.Path,
			HTTPClient: &http.Client{Transport: bearer{token: tok, base: tr}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			t.Fatalf("negotiated %s", v)
		}
		return cs
	}
	alice := connect(token("alice"), "ide")
	if res := call(t, alice, gated, map[string]any{"ms": 1}); res.IsError {
		t.Fatalf("alice: %q", text(res))
	}
	// The same caller's same client: the grant holds, nobody is asked.
	again := connect(token("alice"), "ide")
	if res := call(t, again, gated, map[string]any{"ms": 1}); res.IsError {
		t.Fatalf("alice again: %q", text(res))
	}
	if n := len(a.prompts()); n != 1 {
		t.Fatalf("asked %d times, want once", n)
	}
	// Another caller, and another client of alice's, are asked (and
	// decline).
	for _, cs := range []*mcp.ClientSession{connect(token("bob"), "ide"), connect(token("alice"), "other-ide")} {
		if res := call(t, cs, gated, map[string]any{"ms": 1}); !res.IsError || text(res) != "user rejected MCP tool call" {
			t.Errorf("a grant of another session served this call: %v %q", res.IsError, text(res))
		}
	}
	if n := len(a.prompts()); n != 3 {
		t.Errorf("asked %d times, want 3", n)
	}
	// Audit: each call under its caller, client and session.
	sessions := map[string]string{}
	raw, err := os.ReadFile(filepath.Join(f.dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(raw)) {
		var r struct {
			Event     string `json:"event"`
			ModelName string `json:"model_name"`
			SessionID string `json:"session_id"`
			Caller    *struct {
				Subject string `json:"subject"`
			} `json:"caller"`
			Client *struct {
				Name string `json:"name"`
			} `json:"client"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if r.Event != "tool_call_end" || r.ModelName != gated {
			continue
		}
		if r.Caller == nil || r.Client == nil {
			t.Errorf("an audit record lacks its caller or client: %s", line)
			continue
		}
		who := r.Caller.Subject + "/" + r.Client.Name
		if prev, ok := sessions[who]; ok && prev != r.SessionID {
			t.Errorf("%s's calls ran in sessions %s and %s", who, prev, r.SessionID)
		}
		sessions[who] = r.SessionID
	}
	if len(sessions) != 3 || sessions["alice/ide"] == sessions["bob/ide"] || sessions["alice/ide"] == sessions["alice/other-ide"] {
		t.Errorf("sessions by caller/client: %v", sessions)
	}
}

// TestClaudeCodeNegotiates2026OverHTTP: the pinned Claude Code, told of
// `toolgate serve --http` (`claude mcp add --transport http`), checks it
// with `claude mcp list` at 2026-07-28, as the gateway's session line
// shows. No model is involved.
func TestClaudeCodeNegotiates2026OverHTTP(t *testing.T) {
	interop := testbin.Interop(t)
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	plat := map[string]string{"linux": "linux", "darwin": "darwin", "windows": "win32"}[runtime.GOOS]
	name := "claude"
	if runtime.GOOS == "windows" {
		name = "claude.exe"
	}
	claude := filepath.Join(interop, "node_modules", "@anthropic-ai", "claude-code-"+plat+"-"+arch, name)
	if _, err := os.Stat(claude); err != nil {
		t.Fatalf("Claude Code's binary for %s/%s is not installed (%v); run make interop", runtime.GOOS, runtime.GOARCH, err)
	}
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(`{"numStartups":3,"hasCompletedOnboarding":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, "", demoServer(t, "demo", filepath.Join(dir, "calls"), ""))
	p := startServe(t, nil, "--http", "127.0.0.1:0", "--log-level", "info", "--config", cfg)
	url := p.url(t)
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		cmd := procwatch.DieWithTest(exec.CommandContext(ctx, claude, args...))
		cmd.Dir = dir
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8",
			// No network: listing its MCP servers needs none.
			"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("claude %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("mcp", "add", "--transport", "http", "toolgate", url)
	if out := run("mcp", "list"); !regexp.MustCompile(`(?m)^toolgate: .*\(HTTP\).*Connected`).MatchString(out) {
		t.Fatalf("claude mcp list does not report toolgate connected:\n%s", out)
	}
	p.waitLine(t, regexp.MustCompile(`upstream session started: .*client=claude-code protocol=2026-07-28`))
}

// TestDrainServesOnlyTheRoundsOfCallsInFlight: a 2026-07-28 client has
// no session to keep while toolgate drains. Its call waiting for an
// approval is resumed when the user answers, and gets its result; any
// other request meanwhile gets 503, so the client goes elsewhere.
func TestDrainServesOnlyTheRoundsOfCallsInFlight(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{gateway: gateway.Options{DrainGrace: time.Minute}}, "")
	drains := make(chan events.Draining, 1)
	f.h.Bus.AddSink(events.SinkFunc(func(e events.Event) {
		if d, ok := e.(events.Draining); ok {
			drains <- d
		}
	}))
	srvURL, stop, served := serveHTTP(t, f.gw)
	connectModern := func(opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
		tr := &http.Transport{}
		t.Cleanup(tr.CloseIdleConnections)
		c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, opts)
		cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srvURL, HTTPClient: &http.Client{Transport: tr}, MaxRetries: -1}, nil)
		if err == nil {
			t.Cleanup(func() { _ = cs.Close() })
		}
		return cs, err
	}
	asked, release := make(chan struct{}), make(chan struct{})
	cs, err := connectModern(&mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		close(asked)
		<-release
		return decide("allow"), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s", v)
	}
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: gated, Arguments: map[string]any{"ms": 1}})
		done <- outcome{res, err}
	}()
	testwait.Recv(t, asked, "the approval form") // the call's first round ended with it

	stop() // what SIGTERM does to toolgate serve
	testwait.Recv(t, drains, "the gateway to drain")
	if _, err := cs.ListTools(t.Context(), nil); err == nil || !strings.Contains(err.Error(), "Service Unavailable") {
		t.Errorf("a new request while draining: %v, want 503", err)
	}
	close(release)
	out := testwait.Recv(t, done, "the call's result")
	if out.err != nil || out.res.IsError {
		t.Fatalf("the call in flight = %v, %q; want its result", out.err, text(out.res))
	}
	if err := testwait.Recv(t, served, "ServeHTTP to return"); err != nil {
		t.Errorf("ServeHTTP after the drain: %v", err)
	}
	if calls := serverCalls(t, f.calls); len(calls) != 1 || calls[0] != "slow_write" {
		t.Errorf("server received %v, want the drained call", calls)
	}
}

// TestModernListenStreamCarriesResourceUpdates: a 2026-07-28 client
// subscribes to a resource with a subscriptions/listen POST; once
// toolgate acknowledged it, the resource's updates arrive on that
// stream. Read on the wire, since go-sdk's client does not wait for the
// acknowledgement before Subscribe returns.
func TestModernListenStreamCarriesResourceUpdates(t *testing.T) {
	f := newFixture(t, "", demoServer(t, "docs", t.TempDir()+"/calls", "prefix = false", "--resources", "2"))
	url := f.httpServer(t, f.h.Config().Serve, nil).URL + gateway.Path
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel() // ends the listen stream
	resp := postMessage(t, ctx, url, `{"jsonrpc":"2.0","id":"listen-1","method":"subscriptions/listen","params":{`+
		`"notifications":{"resourceSubscriptions":["demo://doc/00001"]},"_meta":{`+
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
		`"io.modelcontextprotocol/clientInfo":{"name":"wire","version":"1"},`+
		`"io.modelcontextprotocol/clientCapabilities":{}}}}`,
		map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"})
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("listen: %s %s", resp.Status, b)
	}
	messages := make(chan string, 16)
	go func() {
		defer close(messages)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				messages <- data
			}
		}
	}()
	next := func(what string) (method, uri string) {
		t.Helper()
		data, ok := testwait.RecvOK(t, messages, "%s on the listen stream", what)
		if !ok {
			t.Fatalf("the listen stream ended before %s", what)
		}
		var m struct {
			Method string `json:"method"`
			Params struct {
				URI string `json:"uri"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("listen stream message %q: %v", data, err)
		}
		return m.Method, m.Params.URI
	}
	if method, _ := next("the acknowledgement"); method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("the first message is %s, want notifications/subscriptions/acknowledged", method)
	}
	for _, uri := range []string{"demo://doc/00002", "demo://doc/00001"} {
		if _, err := f.h.Manager.CallTool(t.Context(), "docs", "touch_resource", map[string]any{"uri": uri}, nil, mcpclient.CallOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Updates are delivered in order: had the unsubscribed 00002 been
	// sent, it would come first.
	if method, uri := next("the update of demo://doc/00001"); method != "notifications/resources/updated" || uri != "demo://doc/00001" {
		t.Fatalf("got %s %s, want notifications/resources/updated demo://doc/00001", method, uri)
	}
}
