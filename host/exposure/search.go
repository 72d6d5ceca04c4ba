package exposure

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/catalog"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/execution"
	"github.com/toolgate/toolgate/host/exposure/toolsearch"
	"github.com/toolgate/toolgate/host/identity"
)

// SearchToolName is the host's own tool that finds deferred tools.
const SearchToolName = "tool_search"

// DefaultSearchLimit is how many tools tool_search returns by default.
const DefaultSearchLimit = 8

// Literal errors of tool_search, for the model.
const (
	textEmptyQuery = "query must not be empty"
	textBadLimit   = "limit must be greater than zero"
)

// Indexes builds the tool_search index once per set of deferred tools and
// shares it between steps: a catalog revision is indexed once, not once per
// step or per query. The zero value is ready; it is safe for concurrent use.
type Indexes struct {
	mu  sync.Mutex
	key uint64
	ix  *toolsearch.Index
}

// index returns the index of tools, building it when they changed.
func (x *Indexes) index(revision uint64, tools []*Tool, servers map[string]string) *toolsearch.Index {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00", revision)
	for _, t := range tools {
		h.Write([]byte(t.ModelName))
		h.Write([]byte{0})
	}
	key := h.Sum64()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.ix != nil && x.key == key {
		return x.ix
	}
	docs := make([]toolsearch.Doc, 0, len(tools))
	for _, t := range tools {
		docs = append(docs, toolsearch.Doc{
			ID: t.ModelName, Name: t.RawName(), Server: t.Server,
			Title: t.Tool.Title, Description: t.Tool.Description,
			Instructions: servers[t.Server],
			Properties:   propertyNames(t.Tool.InputSchema),
		})
	}
	x.ix, x.key = toolsearch.Build(docs, toolsearch.DefaultOptions()), key
	return x.ix
}

func propertyNames(schema any) []string {
	m, _ := schema.(map[string]any)
	props, _ := m["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// searchTool is the spec of tool_search the model sees, listing where the
// deferred tools come from.
func searchTool(servers []string, instructions map[string]string) *mcp.Tool {
	var b strings.Builder
	b.WriteString("# Tool discovery\n\nSearches over deferred tool metadata with BM25 and exposes matching tools for the next model call. ")
	b.WriteString("Use it to find a tool by what it does or by its name; call the tools it returns by their name.")
	if len(servers) > 0 {
		b.WriteString("\n\nYou have access to tools from the following sources:")
		for _, s := range servers {
			b.WriteString("\n- " + s)
			if d := firstLine(instructions[s]); d != "" {
				b.WriteString(": " + d)
			}
		}
	}
	f := false
	return &mcp.Tool{
		Name:        SearchToolName,
		Title:       "Find tools",
		Description: b.String(),
		InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"query": map[string]any{"type": "string", "description": "What the tool should do, or its name."},
				"limit": map[string]any{"type": "number", "description": fmt.Sprintf("Maximum number of tools to return. Defaults to %d.", DefaultSearchLimit)},
			},
			"required":             []any{"query"},
			"additionalProperties": false,
		},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &f, OpenWorldHint: &f, IdempotentHint: true},
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// SearchResult is what tool_search returns: the specs of the tools found,
// grouped by server in rank order of each server's best tool.
type SearchResult struct {
	Tools []SearchGroup `json:"tools"`
}

// SearchGroup is the tools of one server in a search result.
type SearchGroup struct {
	Server      string       `json:"server"`
	Description string       `json:"description,omitempty"`
	Tools       []SearchSpec `json:"tools"`
}

// SearchSpec is one callable tool.
type SearchSpec struct {
	Name        string               `json:"name"`
	Title       string               `json:"title,omitempty"`
	Description string               `json:"description,omitempty"`
	InputSchema any                  `json:"input_schema"`
	Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
}

// Search runs a tool_search query over the step's deferred tools and
// returns the tools found, in rank order. limit ≤ 0 means the default.
func (s *Step) Search(query string, limit int) ([]*Tool, error) {
	s.capture()
	if strings.TrimSpace(query) == "" {
		return nil, fmt.Errorf(textEmptyQuery)
	}
	if limit == 0 {
		limit = DefaultSearchLimit
	}
	if limit < 0 {
		return nil, fmt.Errorf(textBadLimit)
	}
	if len(s.deferred) == 0 {
		return nil, nil
	}
	ix := s.opts.Indexes.index(s.cat.Revision, s.deferred, s.instructions())
	var out []*Tool
	for _, h := range ix.Search(query, limit) {
		if t, ok := s.registry[h.ID]; ok {
			out = append(out, t)
		}
	}
	s.mu.Lock()
	for _, t := range out {
		s.found[t.ModelName] = true
	}
	s.mu.Unlock()
	return out, nil
}

func (s *Step) instructions() map[string]string {
	out := map[string]string{}
	for name, info := range s.cat.Servers {
		out[name] = info.Instructions
	}
	return out
}

// callSearch serves a model call of tool_search.
func (s *Step) callSearch(ctx context.Context, req CallRequest, started time.Time) CallResult {
	var in struct {
		Query *string  `json:"query"`
		Limit *float64 `json:"limit"`
	}
	args, err := execution.ParseArguments(req.Arguments)
	if err == nil {
		b, _ := json.Marshal(args)
		err = json.Unmarshal(b, &in)
	}
	if err != nil {
		return s.ended(req.CallID, s.search, started, err)
	}
	query, limit := "", 0
	if in.Query != nil {
		query = *in.Query
	}
	if in.Limit != nil {
		if *in.Limit <= 0 {
			return s.ended(req.CallID, s.search, started, fmt.Errorf(textBadLimit))
		}
		limit = int(*in.Limit)
	}
	found, err := s.Search(query, limit)
	if err != nil {
		return s.ended(req.CallID, s.search, started, err)
	}
	out := SearchResult{Tools: []SearchGroup{}}
	group := map[string]int{}
	for _, t := range found {
		i, ok := group[t.Server]
		if !ok {
			i = len(out.Tools)
			group[t.Server] = i
			out.Tools = append(out.Tools, SearchGroup{Server: t.Server, Description: firstLine(t.ServerInfo.Instructions), Tools: []SearchSpec{}})
		}
		out.Tools[i].Tools = append(out.Tools[i].Tools, SearchSpec{
			Name: t.ModelName, Title: t.Tool.Title, Description: t.Tool.Description,
			InputSchema: t.Tool.InputSchema, Annotations: t.Tool.Annotations,
		})
	}
	s.opts.Events.Emit(events.ToolCallBegin{At: started,
		Call:      events.Call{CallID: req.CallID, SessionID: s.opts.SessionID, Tool: SearchToolName, ModelName: SearchToolName, Caller: identity.From(ctx)},
		Arguments: args})
	b, _ := json.Marshal(out)
	var structured map[string]any
	_ = json.Unmarshal(b, &structured)
	raw := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: structured}
	wall := s.opts.Now().Sub(started)
	s.opts.Events.Emit(events.ToolCallEnd{At: s.opts.Now(),
		Call:   events.Call{CallID: req.CallID, SessionID: s.opts.SessionID, Tool: SearchToolName, ModelName: SearchToolName, Caller: identity.From(ctx)},
		Status: events.CallCompleted, Duration: wall, Result: execution.EventProjection(raw, nil)})
	return CallResult{CallID: req.CallID, Status: events.CallCompleted, Raw: raw, Tool: s.search, Found: found,
		wall: wall, model: s.opts.Model}
}

// searchEntry returns the registry entry of tool_search for this step.
func newSearchEntry(servers []string, instructions map[string]string) *Tool {
	return &Tool{
		ToolInfo: catalog.ToolInfo{Tool: searchTool(servers, instructions), Name: SearchToolName,
			ModelName: SearchToolName, ModelVisible: true},
		Exposure: Builtin,
		Parallel: true,
	}
}
