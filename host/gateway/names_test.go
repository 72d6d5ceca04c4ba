package gateway

import (
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/hcl/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/catalog"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/exposure"
	"github.com/toolgate/toolgate/host/internal/warnlimit"
	"github.com/toolgate/toolgate/host/manager"
)

func tool(server, raw, model string, prefix bool) *exposure.Tool {
	return &exposure.Tool{
		ToolInfo: catalog.ToolInfo{Server: server, Tool: &mcp.Tool{Name: raw, InputSchema: map[string]any{"type": "object"}}, ModelName: model},
		Exposure: exposure.Direct,
		ServerInfo: manager.ServerInfo{Config: config.Server{Name: server, Prefix: prefix,
			DeclRange: hcl.Range{Filename: "toolgate.hcl", Start: hcl.Pos{Line: len(server)}}}},
	}
}

func TestUpstreamNames(t *testing.T) {
	for _, tt := range []struct {
		name      string
		tools     []*exposure.Tool
		before    map[string]Owner // holders of names served before
		served    []string
		conflicts []string // texts that must appear in the error
	}{
		{
			name:   "prefixed servers serve model names",
			tools:  []*exposure.Tool{tool("files", "read-file", "mcp__files__read_file", true), tool("demo", "echo", "mcp__demo__echo", true)},
			served: []string{"mcp__demo__echo", "mcp__files__read_file"},
		},
		{
			name:   "prefix = false keeps raw names, dots and dashes included",
			tools:  []*exposure.Tool{tool("solo", "get-sum.v2", "get_sum_v2", false), tool("demo", "echo", "mcp__demo__echo", true)},
			served: []string{"get-sum.v2", "mcp__demo__echo"},
		},
		{
			name: "two unprefixed servers with one tool name",
			tools: []*exposure.Tool{
				tool("alpha", "search", "search_1", false), tool("beta", "search", "search_2", false),
				tool("demo", "echo", "mcp__demo__echo", true),
			},
			served: []string{"mcp__demo__echo"},
			conflicts: []string{
				`upstream tool name "search" is claimed by tool "search" of server "alpha" (toolgate.hcl:5) and by tool "search" of server "beta" (toolgate.hcl:4)`,
				`set prefix = true in the server block(s) "alpha", "beta"`,
			},
		},
		{
			name:      "an unprefixed raw name that looks like a prefixed one",
			tools:     []*exposure.Tool{tool("x", "mcp__demo__echo", "mcp__demo__echo_1", false), tool("demo", "echo", "mcp__demo__echo", true)},
			conflicts: []string{`tool "mcp__demo__echo" of server "x"`, `tool "echo" of server "demo"`, `server block(s) "x"`},
		},
		{
			name: "a newcomer claiming a served name does not take it",
			tools: []*exposure.Tool{
				tool("alpha", "search", "search_1", false), tool("beta", "search", "search_2", false),
				tool("demo", "echo", "mcp__demo__echo", true),
			},
			before: map[string]Owner{"search": {Server: "beta", Tool: "search"}, "mcp__demo__echo": {Server: "demo", Tool: "echo", Prefixed: true}},
			served: []string{"mcp__demo__echo", "search"},
			conflicts: []string{
				`upstream tool name "search" is claimed by`,
				`Until then tool "search" of server "beta" (toolgate.hcl:4) is still served under it, as before`,
			},
		},
		{
			name: "a name whose holder is not listed (its server is down) waits for it",
			tools: []*exposure.Tool{
				tool("alpha", "search", "search_1", false), tool("demo", "echo", "mcp__demo__echo", true),
			},
			before: map[string]Owner{"search": {Server: "beta", Tool: "search"}},
			served: []string{"mcp__demo__echo"},
			conflicts: []string{
				`upstream tool name "search" belongs to tool "search" of server "beta", whose server is down; tool "search" of server "alpha" (toolgate.hcl:5) also claims it`,
				`set prefix = true in the server block(s) "alpha", "beta"`,
			},
		},
		{
			name:      "a raw name MCP does not allow",
			tools:     []*exposure.Tool{tool("solo", "read/file", "read_file", false)},
			conflicts: []string{`would be served as "read/file", which MCP does not allow`, `set prefix = true in the server "solo" block, or add "read/file" to its disabled_tools`},
		},
		{
			name:      "a raw name too long for MCP",
			tools:     []*exposure.Tool{tool("solo", strings.Repeat("x", 129), "x", false)},
			conflicts: []string{"at most 128 characters"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			named, err := nameTools(tt.tools, tt.before)
			var got []string
			for n, tl := range named {
				got = append(got, n)
				if prev, ok := tt.before[n]; ok && ownerKey(prev.Server, prev.Tool) != ownerKey(tl.Server, tl.RawName()) {
					t.Errorf("%q changed hands: now %s of %s", n, tl.RawName(), tl.Server)
				}
			}
			sort.Strings(got)
			if diff := cmp.Diff(tt.served, got); diff != "" {
				t.Errorf("served names (-want +got):\n%s", diff)
			}
			if len(tt.conflicts) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			var ne *NameError
			if !errors.As(err, &ne) || !errors.Is(err, ErrToolName) {
				t.Fatalf("err = %v, want a *NameError matching ErrToolName", err)
			}
			for _, want := range tt.conflicts {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%s", want, err)
				}
			}
		})
	}
}

// TestToolsWithSchemasGoSDKRefusesAreLeftOut: a tool whose schema go-sdk
// refuses is left out of the catalog, and the reason logged is go-sdk's own
// message, which names what to fix in the server's schema.
func TestToolsWithSchemasGoSDKRefusesAreLeftOut(t *testing.T) {
	bad := []struct {
		name   string
		schema any
		reason string // in the error checkTool returns
	}{
		{"no input schema", nil, "missing input schema"},
		{"input type not object", map[string]any{"type": "string"}, `input schema must have type "object" (got string)`},
		{"input type missing", map[string]any{"properties": map[string]any{}}, `input schema must have type "object" (got <nil>)`},
		{"header on an object", map[string]any{"type": "object", "properties": map[string]any{
			"a": map[string]any{"type": "object", "x-mcp-header": "X-A"}}},
			`property "a": x-mcp-header can only be applied to primitive types`},
		{"header name not a token", map[string]any{"type": "object", "properties": map[string]any{
			"a": map[string]any{"type": "string", "x-mcp-header": "X A"}}},
			`property "a": x-mcp-header value "X A" contains invalid character ' '`},
		{"header used twice", map[string]any{"type": "object", "properties": map[string]any{
			"a": map[string]any{"type": "string", "x-mcp-header": "X-A"},
			"b": map[string]any{"type": "string", "x-mcp-header": "x-a"}}},
			`duplicate x-mcp-header value`},
	}
	var tools []*exposure.Tool
	for _, b := range bad {
		tl := tool("demo", strings.ReplaceAll(b.name, " ", "_"), "mcp__demo__"+strings.ReplaceAll(b.name, " ", "_"), true)
		tl.Tool.InputSchema = b.schema
		tools = append(tools, tl)
		err := checkTool(tl.Tool)
		if err == nil || !strings.Contains(err.Error(), b.reason) {
			t.Errorf("%s: checkTool = %v, want go-sdk's reason %q", b.name, err, b.reason)
		}
	}
	good := tool("demo", "echo", "mcp__demo__echo", true)
	good.Tool.OutputSchema = map[string]any{"type": "object"}
	tools = append(tools, good)
	if err := checkTool(good.Tool); err != nil {
		t.Errorf("the good tool: %v", err)
	}

	// Only the plan is built: no host, no sessions.
	g := &Gateway{log: hclog.NewNullLogger(), warns: warnlimit.New(warnlimit.Options{})}
	p := g.buildPlan(1, tools)
	var served []string
	for n := range p.tools {
		served = append(served, n)
	}
	if diff := cmp.Diff([]string{"mcp__demo__echo"}, served); diff != "" {
		t.Errorf("served (-want +got):\n%s", diff)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "t"}, nil)
	if err := addTool(server, p.tools["mcp__demo__echo"].spec, nil); err != nil {
		t.Errorf("the good tool: %v", err)
	}
}
