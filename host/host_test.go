package host_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host"
	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/exposure"
	"github.com/toolgate/toolgate/host/manager"
	"github.com/toolgate/toolgate/host/pipeline"
	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testbin"
)

// TestMain makes the test binary what toolgate's main is to the processes
// it starts in-process: a possible supervisor (host.RunSupervisorIfAsked,
// as an embedding program's main calls it), without which a server's
// setsid descendant escapes its cell.
func TestMain(m *testing.M) {
	host.RunSupervisorIfAsked()
	os.Exit(testbin.Main(m))
}

// scripted answers approval prompts from a queue and records them.
type scripted struct {
	mu      sync.Mutex
	answers []approval.Choice
	asked   []approval.Prompt
}

func (s *scripted) AskApproval(ctx context.Context, p approval.Prompt) (approval.Choice, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, p)
	if len(s.answers) == 0 {
		return approval.ChoiceCancel, nil
	}
	c := s.answers[0]
	s.answers = s.answers[1:]
	return c, nil
}

func (s *scripted) Elicit(context.Context, approval.Elicitation) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "decline"}, nil
}

type fixture struct {
	root    string // mcp-demo's --root: where write_file and delete_file act
	h       *host.Host
	up      pipeline.Upstream // the setup's asker as the calls' Upstream; nil without one
	rec     *events.Recorder
	calls   string // mcp-demo call log
	cfgPath string
}

// asking is the Upstream of a test's calls: its Asker answers the
// approval question; it takes no sampling, log messages or progress.
type asking struct{ approval.Asker }

func (asking) Sample(context.Context, string, *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	return nil, errors.New("this test host takes no sampling")
}
func (asking) Log(*mcp.LoggingMessageParams)                   {}
func (asking) Progress() func(*mcp.ProgressNotificationParams) { return nil }

// setup describes a test host: one mcp-demo server plus whatever
// top-level HCL (plugins, approval) a test needs.
type setup struct {
	asker  approval.Asker
	opts   host.Options
	audit  string   // the audit setting; "" = audit_log = "audit.jsonl"
	top    string   // top-level HCL; {{ROOT}} and {{BIN:name}} are replaced
	server string   // the server's name; "" = demo
	body   string   // HCL inside the server block
	args   []string // extra mcp-demo arguments
}

// newHost writes a config with one mcp-demo server "demo" (plus extra HCL
// inside its block) and starts a host for it.
func newHost(t *testing.T, asker approval.Asker, serverBody string, demoArgs ...string) *fixture {
	t.Helper()
	return startHost(t, setup{asker: asker, body: serverBody, args: demoArgs})
}

var binRef = regexp.MustCompile(`\{\{BIN:([^}]+)\}\}`)

func startHost(t testing.TB, s setup) *fixture {
	t.Helper()
	if s.server == "" {
		s.server = "demo"
	}
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls.jsonl")
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(append([]string{"--call-log", calls, "--root", root}, s.args...))
	cfgPath := filepath.Join(dir, "toolgate.hcl")
	if s.audit == "" {
		s.audit = `audit_log = "audit.jsonl"`
	}
	src := fmt.Sprintf(`# a test config
%s
%s
server %q {
  command = %q
  args    = %s
  %s
}
`, s.audit, s.top, s.server, testbin.Path(t, "mcp-demo"), args, s.body)
	src = strings.ReplaceAll(src, "{{ROOT}}", root)
	src = binRef.ReplaceAllStringFunc(src, func(m string) string {
		return testbin.Path(t, binRef.FindStringSubmatch(m)[1])
	})
	if err := os.WriteFile(cfgPath, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load(cfgPath, config.LoadOptions{})
	if diags.HasErrors() {
		t.Fatalf("%v\n%s", diags, src)
	}
	rec := &events.Recorder{}
	opts := s.opts
	opts.Sinks = append(opts.Sinks, rec)
	opts.Cwd = root
	h, err := host.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("closing host: %v", err)
		}
	})
	h.Start(t.Context())
	if _, err := h.Manager.WaitStartup(t.Context()); err != nil {
		t.Fatal(err)
	}
	f := &fixture{root: root, h: h, rec: rec, calls: calls, cfgPath: cfgPath}
	if s.asker != nil {
		f.up = asking{s.asker}
	}
	return f
}

// serverCalls returns the tools the server received, in order.
func (f *fixture) serverCalls(t *testing.T) []string {
	t.Helper()
	fh, err := os.Open(f.calls)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []string
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		var rec struct{ Event, Tool string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("call log line %q: %v", sc.Text(), err)
		}
		if rec.Event == "call" {
			out = append(out, rec.Tool)
		}
	}
	return out
}

func TestUserAnswersDecideWhetherTheServerIsContacted(t *testing.T) {
	for _, tt := range []struct {
		choice  approval.Choice
		status  string
		reached bool
		text    string
	}{
		{approval.ChoiceAllow, events.CallCompleted, true, ""},
		{approval.ChoiceDecline, events.CallDenied, false, "user rejected MCP tool call"},
		{approval.ChoiceCancel, events.CallDenied, false, "user cancelled MCP tool call"},
	} {
		t.Run(tt.choice.String(), func(t *testing.T) {
			asker := &scripted{answers: []approval.Choice{tt.choice}}
			f := newHost(t, asker, "")
			victim := filepath.Join(f.root, "victim.txt")
			if err := os.WriteFile(victim, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			res := f.h.NewStep("").Call(t.Context(), exposure.CallRequest{Upstream: f.up,
				Name: "mcp__demo__delete_file", Arguments: []byte(`{"path":"victim.txt"}`)})
			if res.Status != tt.status || res.Reached != tt.reached {
				t.Fatalf("status %s reached %v, want %s %v (%s)", res.Status, res.Reached, tt.status, tt.reached, res.Output().Text)
			}
			if tt.text != "" && !strings.Contains(res.Output().Text, tt.text) {
				t.Errorf("model text %q lacks %q", res.Output().Text, tt.text)
			}
			got := f.serverCalls(t)
			if tt.reached != slices.Contains(got, "delete_file") {
				t.Errorf("server received %v; reached=%v", got, tt.reached)
			}
			if _, err := os.Stat(victim); tt.reached == (err == nil) {
				t.Errorf("file exists=%v after %s", err == nil, tt.choice)
			}
			if len(asker.asked) != 1 || asker.asked[0].Question != `Allow the demo MCP server to run tool "delete_file"?` {
				t.Errorf("prompts = %+v", asker.asked)
			}
		})
	}
}

func TestBadArgumentsNeverReachTheServer(t *testing.T) {
	f := newHost(t, nil, "")
	step := f.h.NewStep("")
	for _, args := range []string{`{"text":`, `["x"]`, `"text"`} {
		res := step.Call(t.Context(), exposure.CallRequest{Upstream: f.up, Name: "mcp__demo__echo", Arguments: []byte(args)})
		if res.Status != events.CallFailed || res.Reached {
			t.Errorf("args %s: %+v", args, res)
		}
	}
	res := step.Call(t.Context(), exposure.CallRequest{Upstream: f.up, Name: "mcp__demo__nope"})
	if !strings.Contains(res.Output().Text, "unsupported call: mcp__demo__nope") {
		t.Errorf("unknown tool: %q", res.Output().Text)
	}
	if got := f.serverCalls(t); len(got) != 0 {
		t.Errorf("the server was contacted: %v", got)
	}
	// Empty arguments mean no arguments, and that call does run.
	if res := step.Call(t.Context(), exposure.CallRequest{Upstream: f.up, Name: "mcp__demo__pid"}); res.Status != events.CallCompleted {
		t.Errorf("no-argument call: %s", res.Output().Text)
	}
}

func TestHiddenToolsAreNotRunnableByTheModel(t *testing.T) {
	f := newHost(t, nil, "", "--hidden-tool")
	step := f.h.NewStep("")
	tl, ok := step.Lookup("mcp__demo__hidden_tool")
	if !ok || tl.Exposure != exposure.Hidden {
		t.Fatalf("hidden tool registry entry: %+v %v", tl, ok)
	}
	for _, v := range step.Tools() {
		if v.ModelName == "mcp__demo__hidden_tool" {
			t.Fatal("a hidden tool is in the model's list")
		}
	}
	res := step.Call(t.Context(), exposure.CallRequest{Upstream: f.up, Name: "mcp__demo__hidden_tool"})
	if res.Reached || !strings.Contains(res.Output().Text, "is not available to the model") {
		t.Errorf("hidden call: %+v", res)
	}
}

func TestCallRacedWithACatalogChangeIsRefused(t *testing.T) {
	asker := &gate{release: make(chan struct{}), asked: make(chan struct{}, 1)}
	f := newHost(t, asker, `tool "mutate_tools" { approval_mode = "approve" }`)
	step := f.h.NewStep("")
	step.Tools() // the step captures the catalog now

	done := make(chan exposure.CallResult)
	go func() {
		done <- step.Call(t.Context(), exposure.CallRequest{Upstream: f.up, Name: "mcp__demo__delete_file", Arguments: []byte(`{"path":"x"}`)})
	}()
	<-asker.asked // the call is prepared and waits on the human
	// Meanwhile the server replaces delete_file.
	other := f.h.NewStep("")
	rev := f.h.Manager.Revision()
	if res := other.Call(t.Context(), exposure.CallRequest{Upstream: f.up, Name: "mcp__demo__mutate_tools",
		Arguments: []byte(`{"remove":["delete_file"],"add":["delete_file"]}`)}); res.Status != events.CallCompleted {
		t.Fatalf("mutate: %s", res.Output().Text)
	}
	if _, err := f.rec.WaitFor(t.Context(), func(e events.Event) bool {
		s, ok := e.(events.ServerState)
		return ok && s.Revision > rev
	}); err != nil {
		t.Fatal(err)
	}
	close(asker.release)
	res := <-done
	want := `tool call rejected because the catalog changed after "demo/delete_file" was prepared`
	if res.Reached || res.Raw.Content[0].(*mcp.TextContent).Text != want {
		t.Fatalf("raced call: reached=%v %q", res.Reached, res.Output().Text)
	}
	if slices.Contains(f.serverCalls(t), "delete_file") {
		t.Error("the changed tool was called")
	}
}

// gate approves, but only once released, and says when it was asked.
type gate struct {
	release chan struct{}
	asked   chan struct{}
}

func (g *gate) AskApproval(ctx context.Context, p approval.Prompt) (approval.Choice, error) {
	g.asked <- struct{}{}
	select {
	case <-g.release:
		return approval.ChoiceAllow, nil
	case <-ctx.Done():
		return approval.ChoiceCancel, ctx.Err()
	}
}
func (g *gate) Elicit(context.Context, approval.Elicitation) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "decline"}, nil
}

type interval struct{ Start, End int64 }

// maxOverlap returns the largest number of intervals open at one instant.
func maxOverlap(ivs []interval) int {
	type edge struct {
		at    int64
		delta int
	}
	var es []edge
	for _, iv := range ivs {
		es = append(es, edge{iv.Start, 1}, edge{iv.End, -1})
	}
	sort.Slice(es, func(i, j int) bool {
		if es[i].at != es[j].at {
			return es[i].at < es[j].at
		}
		return es[i].delta < es[j].delta // close before open at a tie
	})
	depth, best := 0, 0
	for _, e := range es {
		depth += e.delta
		best = max(best, depth)
	}
	return best
}

func TestReadOnlyCallsRunInParallelOthersSerialize(t *testing.T) {
	f := newHost(t, nil, `tool "slow_write" { approval_mode = "approve" }`)
	step := f.h.NewStep("")
	run := func(tool string, n int, ms string) []interval {
		var wg sync.WaitGroup
		out := make([]interval, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res := step.Call(t.Context(), exposure.CallRequest{Upstream: f.up, Name: tool, Arguments: []byte(ms)})
				if res.Status != events.CallCompleted {
					t.Errorf("%s: %s", tool, res.Output().Text)
					return
				}
				text := res.Raw.Content[0].(*mcp.TextContent).Text
				if err := json.Unmarshal([]byte(text), &out[i]); err != nil {
					t.Errorf("%s result %q: %v", tool, text, err)
				}
			}()
		}
		wg.Wait()
		return out
	}

	ro := run("mcp__demo__slow", 50, `{"ms":1000}`)
	// Parallel: many read-only calls were inside the server at once (a
	// serialized path would show a depth of 1).
	if depth := maxOverlap(ro); depth < 25 {
		t.Errorf("at most %d of 50 read-only calls ran at once: they were serialized somewhere", depth)
	}

	w := run("mcp__demo__slow_write", 5, `{"ms":100}`)
	sort.Slice(w, func(i, j int) bool { return w[i].Start < w[j].Start })
	for i := 1; i < len(w); i++ {
		if w[i].Start < w[i-1].End {
			t.Errorf("non-read-only calls %d and %d overlapped", i-1, i)
		}
	}
}

func TestAuditLogRecordsEveryCall(t *testing.T) {
	asker := &scripted{answers: []approval.Choice{approval.ChoiceDecline}}
	f := newHost(t, asker, "")
	step := f.h.NewStep("")
	a := step.Call(t.Context(), exposure.CallRequest{Upstream: f.up, Name: "mcp__demo__echo", Arguments: []byte(`{"text":"x"}`)})
	b := step.Call(t.Context(), exposure.CallRequest{Upstream: f.up, Name: "mcp__demo__delete_file", Arguments: []byte(`{"path":"x"}`)})
	if err := f.h.Close(); err != nil { // flushes the audit file
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(f.cfgPath), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var rec struct {
			Event   string `json:"event"`
			CallID  string `json:"call_id"`
			Verdict string `json:"verdict"`
			Status  string `json:"status"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if rec.CallID != "" {
			kinds[rec.CallID] = append(kinds[rec.CallID], rec.Event+":"+rec.Verdict+rec.Status)
		}
	}
	if got := kinds[a.CallID]; !slices.Equal(got, []string{"tool_call_begin:", "approval_decision:approved", "tool_call_end:completed"}) {
		t.Errorf("approved call audit = %v", got)
	}
	if got := kinds[b.CallID]; !slices.Equal(got, []string{"tool_call_begin:", "approval_decision:denied", "tool_call_end:denied"}) {
		t.Errorf("denied call audit = %v", got)
	}
}

func TestAllowAlwaysIsWrittenToTheConfig(t *testing.T) {
	asker := &scripted{answers: []approval.Choice{approval.ChoiceAllowAlways}}
	f := newHost(t, asker, "")
	res := f.h.NewStep("").Call(t.Context(), exposure.CallRequest{Upstream: f.up, Name: "mcp__demo__slow_write", Arguments: []byte(`{"ms":1}`)})
	if res.Status != events.CallCompleted {
		t.Fatal(res.Output().Text)
	}
	// A later session of the same host is not asked again.
	res = f.h.NewStep("").Call(t.Context(), exposure.CallRequest{Upstream: f.up, Name: "mcp__demo__slow_write", Arguments: []byte(`{"ms":1}`)})
	if res.Status != events.CallCompleted || len(asker.asked) != 1 {
		t.Fatalf("second session: %s, asked %d times", res.Output().Text, len(asker.asked))
	}
	src, _ := os.ReadFile(f.cfgPath)
	if !strings.Contains(string(src), "# a test config") || !strings.Contains(string(src), `tool "slow_write"`) ||
		!strings.Contains(string(src), `approval_mode = "remembered"`) {
		t.Fatalf("config after always:\n%s", src)
	}
	// And a fresh load of the file approves without asking.
	cfg, diags := config.Load(f.cfgPath, config.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	s, _ := cfg.Server("demo")
	if approval.ResolveMode(s, "slow_write") != config.ModeRemembered {
		t.Errorf("reloaded mode = %s", approval.ResolveMode(s, "slow_write"))
	}
}

// TestDeletingAllowAlwaysAndReloadingRevokesIt: the operator removes the
// approval_mode = "remembered" that "Allow and don't ask me again" wrote and
// reloads; the next call, even in the session that granted it, asks again.
func TestDeletingAllowAlwaysAndReloadingRevokesIt(t *testing.T) {
	asker := &scripted{answers: []approval.Choice{approval.ChoiceAllowAlways, approval.ChoiceDecline}}
	f := newHost(t, asker, "")
	call := func(step *exposure.Step) exposure.CallResult {
		return step.Call(t.Context(), exposure.CallRequest{Upstream: f.up, Name: "mcp__demo__slow_write", Arguments: []byte(`{"ms":1}`)})
	}
	granted := f.h.NewStep("granting-session")
	if res := call(granted); res.Status != events.CallCompleted {
		t.Fatal(res.Output().Text)
	}
	src, err := os.ReadFile(f.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?s)\n\s*tool "slow_write" \{[^}]*approval_mode = "remembered"[^}]*\}`)
	if !block.Match(src) {
		t.Fatalf("config after always has no approve block:\n%s", src)
	}
	if err := os.WriteFile(f.cfgPath, block.ReplaceAll(src, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load(f.cfgPath, config.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	f.h.Apply(cfg)

	if res := call(f.h.NewStep("granting-session")); res.Status != events.CallDenied {
		t.Fatalf("after revocation: %s %s, want asked again and declined", res.Status, res.Output().Text)
	}
	asker.mu.Lock()
	defer asker.mu.Unlock()
	if len(asker.asked) != 2 {
		t.Errorf("asked %d times, want 2: the revoked approval must ask again", len(asker.asked))
	}
}

// TestAuditOnErrorDenyRefusesCallsWhileTheLogFails: with audit {
// on_error = "deny" } a call whose records cannot be written never
// reaches the server; by default (and with on_error = "log") it runs as
// before. /dev/full makes every write fail.
func TestAuditOnErrorDenyRefusesCallsWhileTheLogFails(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("needs /dev/full to make audit writes fail")
	}
	for _, tt := range []struct {
		name, audit string
		want        string
	}{
		{"default", `audit_log = "/dev/full"`, events.CallCompleted},
		{"log", "audit {\n  path     = \"/dev/full\"\n  on_error = \"log\"\n}", events.CallCompleted},
		{"deny", "audit {\n  path     = \"/dev/full\"\n  on_error = \"deny\"\n}", events.CallDenied},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := startHost(t, setup{asker: &scripted{answers: []approval.Choice{approval.ChoiceAllow}}, audit: tt.audit})
			res := f.h.NewStep("").Call(t.Context(), exposure.CallRequest{Upstream: f.up, Name: "mcp__demo__echo", Arguments: []byte(`{"text":"hi"}`)})
			if res.Status != tt.want {
				t.Fatalf("status %s (%s), want %s", res.Status, res.Output().Text, tt.want)
			}
			reached := len(f.serverCalls(t)) > 0
			if tt.want == events.CallDenied {
				if reached || !strings.Contains(res.Output().Text, "audit log cannot be written") ||
					!strings.Contains(res.Output().Text, "no space left on device") {
					t.Errorf("refused call: reached the server %v, text %q", reached, res.Output().Text)
				}
			} else if !reached {
				t.Error("the call did not reach the server")
			}
		})
	}
}

// TestUpstreamClientsMayNotPersistApprovalsUnlessAllowed: in toolgate
// serve the approval form's "don't ask me again" would rewrite the
// operator's config; it is offered only with serve {
// allow_persistent_approval = true }.
func TestUpstreamClientsMayNotPersistApprovalsUnlessAllowed(t *testing.T) {
	for _, tt := range []struct {
		name    string
		top     string
		persist bool
	}{
		{"default", "", false},
		{"allowed by the operator", "serve {\n  allow_persistent_approval = true\n}", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			asker := &scripted{answers: []approval.Choice{approval.ChoiceAllowAlways}}
			f := startHost(t, setup{asker: asker, top: tt.top, opts: host.Options{Serving: true}})
			res := f.h.NewStep("").Call(t.Context(), exposure.CallRequest{Upstream: f.up, Name: "mcp__demo__slow_write", Arguments: []byte(`{"ms":1}`)})
			if res.Status != events.CallCompleted {
				t.Fatal(res.Output().Text)
			}
			if offered := slices.Contains(asker.asked[0].Choices, approval.ChoiceAllowAlways); offered != tt.persist {
				t.Errorf("\"don't ask me again\" offered = %v, want %v (choices %v)", offered, tt.persist, asker.asked[0].Choices)
			}
			src, _ := os.ReadFile(f.cfgPath)
			if written := strings.Contains(string(src), `approval_mode = "remembered"`); written != tt.persist {
				t.Errorf("config written = %v, want %v:\n%s", written, tt.persist, src)
			}
		})
	}
}

// TestChangedToolDefinitionVoidsItsApproval: "Allow and don't ask me
// again" is bound to the tool's definition. When the server replaces the
// tool (a "rug pull"), the next call asks again, and the audit trail has
// the approved and the new definition hashes.
func TestChangedToolDefinitionVoidsItsApproval(t *testing.T) {
	asker := &scripted{answers: []approval.Choice{approval.ChoiceAllowAlways, approval.ChoiceAllowSession, approval.ChoiceDecline}}
	f := newHost(t, asker, `tool "mutate_tools" { approval_mode = "approve" }`)
	call := func() exposure.CallResult {
		return f.h.NewStep("s").Call(t.Context(), exposure.CallRequest{Upstream: f.up, Name: "mcp__demo__slow_write", Arguments: []byte(`{"ms":1}`)})
	}
	if res := call(); res.Status != events.CallCompleted {
		t.Fatal(res.Output().Text)
	}
	// The file now binds the approval to the definition; reload it.
	src, _ := os.ReadFile(f.cfgPath)
	if !regexp.MustCompile(`approved_definition = "sha256:[0-9a-f]{64}"`).Match(src) {
		t.Fatalf("config after always:\n%s", src)
	}
	cfg, diags := config.Load(f.cfgPath, config.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	f.h.Apply(cfg)
	if res := call(); res.Status != events.CallCompleted {
		t.Fatalf("unchanged tool after reload: %s", res.Output().Text)
	}

	// The server swaps slow_write for another tool of the same name.
	rev := f.h.Manager.Revision()
	if res := f.h.NewStep("").Call(t.Context(), exposure.CallRequest{Upstream: f.up, Name: "mcp__demo__mutate_tools",
		Arguments: []byte(`{"add":["slow_write"]}`)}); res.Status != events.CallCompleted {
		t.Fatalf("mutate: %s", res.Output().Text)
	}
	replaced := func() bool {
		for _, tl := range f.h.Manager.Snapshot().Tools {
			if tl.RawName() == "slow_write" && strings.Contains(tl.Tool.Description, "Added at runtime") {
				return true
			}
		}
		return false
	}
	for !replaced() { // each re-list is a new revision; wait for the next one
		e, err := f.rec.WaitFor(t.Context(), func(e events.Event) bool {
			s, ok := e.(events.ServerState)
			return ok && s.Revision > rev
		})
		if err != nil {
			t.Fatal(err)
		}
		rev = e.(events.ServerState).Revision
	}
	res := f.h.NewStep("s").Call(t.Context(), exposure.CallRequest{Upstream: f.up, Name: "mcp__demo__slow_write", Arguments: []byte(`{}`)})
	if res.Status != events.CallCompleted {
		t.Fatalf("changed tool, allowed for the session: %s", res.Output().Text)
	}
	asker.mu.Lock()
	asked := len(asker.asked)
	asker.mu.Unlock()
	if asked != 2 {
		t.Errorf("asked %d times, want 2: once at first, once after the tool changed", asked)
	}
	var changes []events.ApprovalDecision
	for _, e := range events.Of[events.ApprovalDecision](f.rec) {
		if e.Definition != "" {
			changes = append(changes, e)
		}
	}
	if len(changes) != 1 || changes[0].ApprovedDefinition == changes[0].Definition ||
		!strings.HasPrefix(changes[0].ApprovedDefinition, "sha256:") || !strings.HasPrefix(changes[0].Definition, "sha256:") {
		t.Errorf("definition change events = %+v, want one with the old and new hashes", changes)
	}
}

func TestToolTimeoutReturnsItsText(t *testing.T) {
	f := newHost(t, nil, "tool_timeout_sec = 0.2")
	res := f.h.NewStep("").Call(t.Context(), exposure.CallRequest{Upstream: f.up, Name: "mcp__demo__slow", Arguments: []byte(`{"ms":30000}`)})
	if res.Status != events.CallFailed || !strings.Contains(res.Output().Text, "timed out awaiting tools/call after 0.2s") {
		t.Fatalf("timeout: %s", res.Output().Text)
	}
	// That notifications/cancelled reaches the server is pinned by the
	// mcpclient and execution tests.
}

func TestReloadRestartsOnlyWhatChanged(t *testing.T) {
	dir := t.TempDir()
	demo := testbin.Path(t, "mcp-demo")
	write := func(body string) *config.Config {
		t.Helper()
		p := filepath.Join(dir, "toolgate.hcl")
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(body, "DEMO", demo)), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, diags := config.Load(p, config.LoadOptions{})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		return cfg
	}
	cfg := write(`
server "same"    { command = "DEMO" }
server "changed" { command = "DEMO" }
server "removed" { command = "DEMO" }
server "modes"   { command = "DEMO" }
server "sampler" { command = "DEMO" }
`)
	rec := &events.Recorder{}
	h, err := host.New(cfg, host.Options{Sinks: []events.Sink{rec}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	h.Start(t.Context())
	if _, err := h.Manager.WaitStartup(t.Context()); err != nil {
		t.Fatal(err)
	}
	pids := func() map[string]int {
		out := map[string]int{}
		for _, s := range h.Manager.Status() {
			out[s.Name] = s.Pid
		}
		return out
	}
	before := pids()

	res := h.Apply(write(`
server "same"    { command = "DEMO" }
server "changed" {
  command = "DEMO"
  args    = ["--name", "changed-v2"]
}
server "modes" {
  command = "DEMO"
  tool "echo" { approval_mode = "prompt" }
}
server "sampler" {
  command          = "DEMO"
  forward_sampling = true # declared at initialize: reconnects
}
server "added"   { command = "DEMO" }
`))
	want := manager.ApplyResult{Kept: []string{"same"}, Updated: []string{"modes"}, Restarted: []string{"changed", "sampler"},
		Removed: []string{"removed"}, Added: []string{"added"}}
	if !reflect.DeepEqual(res, want) {
		t.Fatalf("Apply = %+v, want %+v", res, want)
	}
	// "changed" becomes ready a second time, "added" a first.
	for name, nth := range map[string]int{"changed": 2, "sampler": 2, "added": 1} {
		seen := 0
		if _, err := rec.WaitFor(t.Context(), func(e events.Event) bool {
			if s, ok := e.(events.ServerStartup); ok && s.Server == name && s.Status == events.StatusReady {
				seen++
			}
			return seen == nth
		}); err != nil {
			t.Fatal(err)
		}
	}
	after := pids()
	if after["same"] != before["same"] || after["modes"] != before["modes"] {
		t.Errorf("unchanged servers restarted: before %v after %v", before, after)
	}
	if after["changed"] == before["changed"] || after["changed"] == 0 {
		t.Errorf("the changed server kept its process: before %v after %v", before, after)
	}
	if _, ok := after["removed"]; ok || after["added"] == 0 {
		t.Errorf("after reload: %v", after)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := procwatch.WaitGone(ctx, before["removed"]); err != nil {
		t.Errorf("the removed server's process: %v", err)
	}
	// The new approval mode applies to new steps without a restart.
	if m := approval.ResolveMode(mustServer(t, h.Config(), "modes"), "echo"); m != config.ModePrompt {
		t.Errorf("mode after reload = %s", m)
	}
	res2 := h.NewStep("").Call(t.Context(), exposure.CallRequest{Name: "mcp__modes__echo", Arguments: []byte(`{"text":"x"}`)})
	if res2.Status != events.CallDenied {
		t.Errorf("echo in prompt mode with nobody to ask should be denied, got %s", res2.Status)
	}
}

func mustServer(t *testing.T, cfg *config.Config, name string) config.Server {
	t.Helper()
	s, ok := cfg.Server(name)
	if !ok {
		t.Fatalf("no server %q", name)
	}
	return s
}
