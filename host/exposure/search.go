package exposure

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/catalog"
	"github.com/toolgate/toolgate/host/execution"
	"github.com/toolgate/toolgate/host/exposure/embeddings"
	"github.com/toolgate/toolgate/host/exposure/toolsearch"
	"github.com/toolgate/toolgate/host/pipeline"
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
// step or per query. With an embeddings client it also keeps the tools'
// vectors for the semantic ranking. The zero value is ready; it is safe
// for concurrent use.
type Indexes struct {
	mu   sync.Mutex
	key  uint64
	ix   *toolsearch.Index
	docs []embeddings.Doc // what the semantic index embeds, of key

	semMu     sync.Mutex
	semKey    uint64
	semClient *embeddings.Client
	sem       *embeddings.Index
	// downUntil pauses the semantic ranking after the endpoint failed,
	// so a dead endpoint costs one timeout per semanticRetry, not one per
	// query.
	downUntil time.Time
}

// Semantic ranking limits.
const (
	// fuseDepth is how many tools of each ranking reciprocal-rank fusion
	// looks at.
	fuseDepth = 50
	// embedTimeout bounds one exchange with the embeddings endpoint
	// (embedding a catalog's new tool definitions, or one query).
	embedTimeout = 10 * time.Second
	// semanticRetry is how long a failed endpoint is left alone.
	semanticRetry = 30 * time.Second
)

// errSemanticPaused says the endpoint failed recently; the failure was
// already logged.
var errSemanticPaused = errors.New("the embeddings endpoint failed recently")

// index returns the index of tools, building it when they changed, and
// the key of that set of tools.
func (x *Indexes) index(revision uint64, tools []*Tool, servers map[string]string) (*toolsearch.Index, uint64, []embeddings.Doc) {
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
		return x.ix, x.key, x.docs
	}
	docs := make([]toolsearch.Doc, 0, len(tools))
	x.docs = make([]embeddings.Doc, 0, len(tools))
	for _, t := range tools {
		props := propertyNames(t.Tool.InputSchema)
		docs = append(docs, toolsearch.Doc{
			ID: t.ModelName, Name: t.RawName(), Server: t.Server,
			Title: t.Tool.Title, Description: t.Tool.Description,
			Instructions: servers[t.Server],
			Properties:   props,
		})
		x.docs = append(x.docs, embeddings.Doc{ID: t.ModelName, Text: embeddingText(t, props)})
	}
	x.ix, x.key = toolsearch.Build(docs, toolsearch.DefaultOptions()), key
	return x.ix, x.key, x.docs
}

// embeddingText is what a tool's vector is made of: what the model reads
// about it.
func embeddingText(t *Tool, props []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (server %s)", t.RawName(), t.Server)
	if t.Tool.Title != "" {
		b.WriteString(": " + t.Tool.Title)
	}
	if t.Tool.Description != "" {
		b.WriteString(". " + t.Tool.Description)
	}
	if len(props) > 0 {
		b.WriteString(". Parameters: " + strings.Join(props, ", "))
	}
	return b.String()
}

// semantic ranks the tools of key by similarity to query, embedding the
// tool definitions it has no vector of first.
func (x *Indexes) semantic(ctx context.Context, client *embeddings.Client, key uint64, docs []embeddings.Doc, query string, now time.Time) ([]string, error) {
	x.semMu.Lock()
	sem := x.sem
	if x.semKey != key || x.semClient != client {
		sem = nil
	}
	paused := now.Before(x.downUntil)
	x.semMu.Unlock()
	if paused {
		return nil, errSemanticPaused
	}
	fail := func(err error) ([]string, error) {
		x.semMu.Lock()
		x.downUntil = now.Add(semanticRetry)
		x.semMu.Unlock()
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, embedTimeout)
	defer cancel()
	if sem == nil {
		built, err := client.Build(ctx, docs)
		if err != nil {
			return fail(err)
		}
		sem = built
		x.semMu.Lock()
		x.sem, x.semKey, x.semClient = built, key, client
		x.semMu.Unlock()
	}
	q, err := client.Embed(ctx, []string{query})
	if err != nil {
		return fail(err)
	}
	hits, err := sem.Rank(q[0], fuseDepth)
	if err != nil {
		return fail(err)
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	return ids, nil
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
// With an embeddings client (Options.Embeddings) the BM25 ranking is
// fused with the semantic one; when the endpoint fails, BM25 alone
// answers and the failure is logged.
func (s *Step) Search(ctx context.Context, query string, limit int) ([]*Tool, error) {
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
	ix, key, docs := s.opts.Indexes.index(s.cat.Revision, s.deferred, s.instructions())
	var hits []toolsearch.Hit
	if client := s.opts.Embeddings; client != nil {
		lexical := ix.Search(query, max(limit, fuseDepth))
		semantic, err := s.opts.Indexes.semantic(ctx, client, key, docs, query, s.opts.Now())
		switch {
		case err == nil:
			hits = toolsearch.Fuse(lexical, semantic, limit)
		case errors.Is(err, errSemanticPaused):
		default:
			s.log.Warn("tool_search: the semantic ranking failed; ranking with BM25 alone", "error", err,
				"retry_in", semanticRetry)
		}
	}
	if hits == nil {
		hits = ix.Search(query, limit)
	}
	var out []*Tool
	for _, h := range hits {
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
	var found []*Tool
	out := s.do(ctx, s.search, pipeline.Request{Kind: pipeline.Builtin, ID: req.CallID, SessionID: s.opts.SessionID,
		Name: SearchToolName, ModelName: SearchToolName, Arguments: args, Started: started,
		Run: func(ctx context.Context) (*mcp.CallToolResult, error) {
			var err error
			found, err = s.Search(ctx, query, limit)
			if err != nil {
				return nil, err
			}
			return s.searchResult(found), nil
		}})
	out.Found = found
	return out
}

// searchResult is tool_search's answer: the tools found, by server.
func (s *Step) searchResult(found []*Tool) *mcp.CallToolResult {
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
	return jsonResult(out)
}

// jsonResult is a built-in tool's answer: v as JSON text and as
// structuredContent.
func jsonResult(v any) *mcp.CallToolResult {
	b, _ := json.Marshal(v)
	var structured map[string]any
	_ = json.Unmarshal(b, &structured)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: structured}
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
