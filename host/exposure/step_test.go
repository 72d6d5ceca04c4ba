package exposure

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/catalog"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/execution"
	"github.com/toolgate/toolgate/host/manager"
	"github.com/toolgate/toolgate/host/pipeline"
	"github.com/toolgate/toolgate/internal/glob"
)

// fakeSnapshots serves a catalog that tests can replace.
type fakeSnapshots struct {
	mu  sync.Mutex
	cat *manager.Snapshot
}

func (f *fakeSnapshots) Snapshot() *manager.Snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cat
}

type approveAll struct{}

func (approveAll) Decide(context.Context, approval.Request) approval.Decision {
	return approval.Decision{Approved: true, Step: approval.StepMode, By: "test"}
}

func (approveAll) PreToolUse(_ context.Context, r approval.Request, _ any) (approval.Request, *approval.Decision) {
	return r, nil
}

func (approveAll) PreResourceRead(context.Context, approval.Request) *approval.Decision { return nil }
func (approveAll) PrePromptGet(context.Context, approval.Request) *approval.Decision    { return nil }
func (approveAll) PostToolUse(context.Context, approval.Request, approval.PostResult) []string {
	return nil
}

type recordingExecutor struct {
	mu    sync.Mutex
	calls []string
}

func (r *recordingExecutor) Execute(_ context.Context, req execution.Request) execution.Result {
	r.mu.Lock()
	r.calls = append(r.calls, req.Call.Server+"/"+req.Call.Tool)
	r.mu.Unlock()
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}
	return execution.Result{Raw: res, Status: events.CallCompleted}
}

// tools builds a catalog: server name → tool name → description.
func catalogOf(rev uint64, servers map[string]map[string]string) *manager.Snapshot {
	var raw []catalog.RawTool
	infos := map[string]manager.ServerInfo{}
	for s, tools := range servers {
		infos[s] = manager.ServerInfo{Instructions: "Tools of " + s}
		for name, desc := range tools {
			raw = append(raw, catalog.RawTool{Server: s, Tool: &mcp.Tool{Name: name, Description: desc,
				InputSchema: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}}})
		}
	}
	return &manager.Snapshot{Revision: rev, Tools: catalog.Normalize(raw, catalog.Options{NameLimit: 64}), Servers: infos}
}

var demoServers = map[string]map[string]string{
	"files": {
		"read_file":  "Read the contents of a file from disk.",
		"write_file": "Write text to a file, replacing it.",
		"list_dir":   "List the entries of a directory.",
	},
	"web": {
		"fetch_url":   "Download a web page and return its text.",
		"search_web":  "Search the internet for pages matching a query.",
		"screenshot":  "Take a picture of a web page.",
		"get_weather": "Current weather conditions for a city.",
	},
}

func newTestStep(t *testing.T, cats *fakeSnapshots, pol Policy, ix *Indexes) (*Step, *recordingExecutor) {
	t.Helper()
	exec := &recordingExecutor{}
	return NewStep(Options{Snapshots: cats, Pipeline: pipeline.New(pipeline.Options{Approver: approveAll{}, Executor: exec}), Policy: pol, Indexes: ix}), exec
}

func names(ts []*Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ModelName)
	}
	slices.Sort(out)
	return out
}

func TestExposurePlans(t *testing.T) {
	all := []string{"mcp__files__list_dir", "mcp__files__read_file", "mcp__files__write_file",
		"mcp__web__fetch_url", "mcp__web__get_weather", "mcp__web__screenshot", "mcp__web__search_web"}
	for _, tt := range []struct {
		name     string
		pol      Policy
		direct   []string // besides tool_search
		deferred int
	}{
		{"direct", Policy{Mode: config.ExposureDirect}, all, 0},
		{"deferred", Policy{Mode: config.ExposureDeferred}, nil, 7},
		{"deferred with pins", Policy{Mode: config.ExposureDeferred, NeverDefer: glob.List{glob.MustCompile("mcp__web__fetch_url"), glob.MustCompile("mcp__files__*")}},
			[]string{"mcp__files__list_dir", "mcp__files__read_file", "mcp__files__write_file", "mcp__web__fetch_url"}, 3},
		{"server override", Policy{Mode: config.ExposureDeferred, Servers: map[string]config.ExposureMode{"files": config.ExposureDirect}},
			[]string{"mcp__files__list_dir", "mcp__files__read_file", "mcp__files__write_file"}, 4},
		{"override to deferred in direct mode", Policy{Mode: config.ExposureDirect, Servers: map[string]config.ExposureMode{"web": config.ExposureDeferred}},
			[]string{"mcp__files__list_dir", "mcp__files__read_file", "mcp__files__write_file"}, 4},
		{"auto under the thresholds", Policy{Mode: config.ExposureAuto, DeferCount: 7, DeferBytes: 1 << 20}, all, 0},
		{"auto over the count", Policy{Mode: config.ExposureAuto, DeferCount: 6, DeferBytes: 1 << 20}, nil, 7},
		{"auto over the bytes", Policy{Mode: config.ExposureAuto, DeferCount: 100, DeferBytes: 500}, nil, 7},
		{"auto counts only undecided tools", Policy{Mode: config.ExposureAuto, DeferCount: 4,
			Servers: map[string]config.ExposureMode{"files": config.ExposureDirect}},
			[]string{"mcp__files__list_dir", "mcp__files__read_file", "mcp__files__write_file",
				"mcp__web__fetch_url", "mcp__web__get_weather", "mcp__web__screenshot", "mcp__web__search_web"}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newTestStep(t, &fakeSnapshots{cat: catalogOf(1, demoServers)}, tt.pol, nil)
			var direct []*Tool
			hasSearch := false
			for _, v := range s.Tools() {
				if v.ModelName == SearchToolName {
					hasSearch = true
					continue
				}
				direct = append(direct, v)
			}
			if got := names(direct); !slices.Equal(got, tt.direct) {
				t.Errorf("direct = %v, want %v", got, tt.direct)
			}
			if got := len(s.Deferred()); got != tt.deferred {
				t.Errorf("deferred = %d, want %d", got, tt.deferred)
			}
			if hasSearch != (tt.deferred > 0) {
				t.Errorf("tool_search listed = %v with %d deferred tools", hasSearch, tt.deferred)
			}
		})
	}
}

func TestToolSearchFindsAndRoutesDeferredTools(t *testing.T) {
	cats := &fakeSnapshots{cat: catalogOf(1, demoServers)}
	s, exec := newTestStep(t, cats, Policy{Mode: config.ExposureDeferred}, nil)

	res := s.Call(t.Context(), CallRequest{Name: SearchToolName, Arguments: []byte(`{"query":"take a picture of a website","limit":2}`)})
	if res.Status != events.CallCompleted {
		t.Fatalf("search: %s", res.Output().Text)
	}
	var out SearchResult
	if err := json.Unmarshal([]byte(res.Raw.Content[0].(*mcp.TextContent).Text), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Tools) == 0 || out.Tools[0].Server != "web" || out.Tools[0].Tools[0].Name != "mcp__web__screenshot" {
		t.Fatalf("search result = %+v", out)
	}
	if n := 0; true {
		for _, g := range out.Tools {
			n += len(g.Tools)
		}
		if n > 2 {
			t.Errorf("limit 2 returned %d tools", n)
		}
	}
	if spec := out.Tools[0].Tools[0]; spec.InputSchema == nil || spec.Description == "" {
		t.Errorf("a found tool lacks what the model needs to call it: %+v", spec)
	}
	if len(res.Found) == 0 || res.Found[0].ModelName != "mcp__web__screenshot" {
		t.Errorf("Found = %v", res.Found)
	}
	// The model calls what it found; the router routes it.
	call := s.Call(t.Context(), CallRequest{Name: "mcp__web__screenshot", Arguments: []byte(`{}`)})
	if call.Status != events.CallCompleted || !slices.Equal(exec.calls, []string{"web/screenshot"}) {
		t.Fatalf("call of a found tool: %+v, executed %v", call, exec.calls)
	}
	// An exact name ranks first even with separators changed.
	for _, q := range []string{"write_file", "write-file", "writeFile", "mcp__files__write_file"} {
		found, err := s.Search(t.Context(), q, 3)
		if err != nil || len(found) == 0 || found[0].ModelName != "mcp__files__write_file" {
			t.Errorf("Search(%q) = %v, %v", q, names(found), err)
		}
	}
}

// A model name as the catalog makes it (a server name with characters
// model names cannot hold, a name over the byte limit with its hash
// suffix) finds its tool first, and a short match is filled up to the
// limit with the same server's tools.
func TestToolSearchFindsModelNamesAndFillsTheLimit(t *testing.T) {
	long := "export_the_quarterly_financial_report_as_a_spreadsheet_for_review"
	servers := map[string]map[string]string{
		"my-git.v2": {"git_log": "Shows the commit logs", "git_reset": "Unstages all staged changes", "git_status": "Shows the working tree status"},
		"reports":   {long: "Exports a report.", "list_reports": "Lists reports."},
	}
	cat := catalogOf(1, servers)
	s, _ := newTestStep(t, &fakeSnapshots{cat: cat}, Policy{Mode: config.ExposureDeferred}, nil)
	var longModel string
	for _, ti := range cat.Tools {
		if ti.RawName() == long {
			longModel = ti.ModelName
		}
	}
	if len(longModel) > 64 || !strings.HasPrefix(longModel, "mcp__reports__") {
		t.Fatalf("the catalog named %s %q; the test needs a hashed name", long, longModel)
	}
	for _, q := range []string{"mcp__my_git_v2__git_log", "call mcp__my_git_v2__git_log(max_count=5)", longModel, "`" + longModel + "`"} {
		found, err := s.Search(t.Context(), q, 8)
		if err != nil || len(found) == 0 || !strings.Contains(q, found[0].ModelName) {
			t.Errorf("Search(%q) = %v, %v; want the named tool first", q, names(found), err)
		}
	}
	found, err := s.Search(t.Context(), "unstage", 8)
	if err != nil || len(found) != 3 || found[0].ModelName != "mcp__my_git_v2__git_reset" {
		t.Errorf("Search(unstage) = %v, %v; want git_reset first, then the two other tools of its server", names(found), err)
	}
}

func TestToolSearchErrors(t *testing.T) {
	s, _ := newTestStep(t, &fakeSnapshots{cat: catalogOf(1, demoServers)}, Policy{Mode: config.ExposureDeferred}, nil)
	for args, want := range map[string]string{
		`{"query":""}`:             "query must not be empty",
		`{"query":"   "}`:          "query must not be empty",
		`{}`:                       "query must not be empty",
		`{"query":"x","limit":0}`:  "limit must be greater than zero",
		`{"query":"x","limit":-3}`: "limit must be greater than zero",
	} {
		res := s.Call(t.Context(), CallRequest{Name: SearchToolName, Arguments: []byte(args)})
		if res.Status != events.CallFailed || res.Raw.Content[0].(*mcp.TextContent).Text != want {
			t.Errorf("%s: %s %q, want %q", args, res.Status, res.Output().Text, want)
		}
	}
}

func TestIndexIsBuiltOncePerRevision(t *testing.T) {
	cats := &fakeSnapshots{cat: catalogOf(1, demoServers)}
	ix := &Indexes{}
	first := func() any {
		s, _ := newTestStep(t, cats, Policy{Mode: config.ExposureDeferred}, ix)
		if _, err := s.Search(t.Context(), "weather", 1); err != nil {
			t.Fatal(err)
		}
		ix.mu.Lock()
		defer ix.mu.Unlock()
		return ix.ix
	}
	a, b := first(), first()
	if a != b {
		t.Error("two steps on the same revision built two indexes")
	}
	more := map[string]map[string]string{"files": demoServers["files"], "web": demoServers["web"],
		"maps": {"route": "Directions between two places."}}
	cats.mu.Lock()
	cats.cat = catalogOf(2, more)
	cats.mu.Unlock()
	if c := first(); c == a {
		t.Error("a new revision reused the old index")
	}
	s, _ := newTestStep(t, cats, Policy{Mode: config.ExposureDeferred}, ix)
	found, _ := s.Search(t.Context(), "directions between places", 1)
	if len(found) != 1 || found[0].ModelName != "mcp__maps__route" {
		t.Errorf("a tool added in the new revision is not searchable: %v", names(found))
	}
}

func TestRegistryKeepsVisibleAndRunnableApart(t *testing.T) {
	hidden := &mcp.Tool{Name: "app_only", Meta: mcp.Meta{"ui": map[string]any{"visibility": []any{"app"}}},
		InputSchema: map[string]any{"type": "object"}}
	cat := &manager.Snapshot{Revision: 1, Servers: map[string]manager.ServerInfo{"s": {}},
		Tools: catalog.Normalize([]catalog.RawTool{{Server: "s", Tool: hidden},
			{Server: "s", Tool: &mcp.Tool{Name: "plain", InputSchema: map[string]any{"type": "object"}}}}, catalog.Options{})}
	s, exec := newTestStep(t, &fakeSnapshots{cat: cat}, Policy{}, nil)
	if got := names(s.Tools()); !slices.Equal(got, []string{"mcp__s__plain"}) {
		t.Errorf("model-visible = %v", got)
	}
	if tl, ok := s.Lookup("mcp__s__app_only"); !ok || tl.Exposure != Hidden {
		t.Errorf("hidden tool registry entry: %+v %v", tl, ok)
	}
	res := s.Call(t.Context(), CallRequest{Name: "mcp__s__app_only"})
	if res.Reached || len(exec.calls) != 0 || !strings.Contains(res.Err.Error(), "not available to the model") {
		t.Errorf("hidden call: %+v", res)
	}
	res = s.Call(t.Context(), CallRequest{Name: "nope"})
	if res.Err == nil || res.Err.Error() != "unsupported call: nope" {
		t.Errorf("unknown call: %v", res.Err)
	}
}
