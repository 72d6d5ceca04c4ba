package exposure

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/catalog"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/execution"
)

// The host's resource tools, like Codex's: a model reaches the resources
// of every server through them. They appear when any server lists a
// resource or a resource template.
const (
	ListResourcesToolName = "list_mcp_resources"
	ListTemplatesToolName = "list_mcp_resource_templates"
	ReadResourceToolName  = "read_mcp_resource"
)

// resourcePageSize is how many entries one list call returns; the model
// pages with the cursor it is given.
const resourcePageSize = 100

// IsResourceTool reports whether name is one of the host's resource
// tools. The gateway leaves them out: its clients have resources/* of
// their own.
func IsResourceTool(name string) bool {
	switch name {
	case ListResourcesToolName, ListTemplatesToolName, ReadResourceToolName:
		return true
	}
	return false
}

// ResourceReader reads one resource of one server (the manager). A
// step's Catalogs that also implements it enables read_mcp_resource.
type ResourceReader interface {
	ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error)
}

// resourceTools returns the registry entries of the resource tools for
// a catalog that lists resources or templates; nil otherwise.
func resourceTools(resources []catalog.ResourceInfo, templates []catalog.TemplateInfo) []*Tool {
	if len(resources) == 0 && len(templates) == 0 {
		return nil
	}
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true}
	server := map[string]any{"type": "string", "description": "Only this MCP server's entries. Omit to list every server's."}
	cursor := map[string]any{"type": "string", "description": "The nextCursor of the previous page, to get the next one."}
	specs := []*mcp.Tool{
		{Name: ListResourcesToolName, Annotations: ro,
			Description: "List the resources (files, documents, records) that the MCP servers offer, with each one's server and URI. Read one with " + ReadResourceToolName + ".",
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{"server": server, "cursor": cursor}}},
		{Name: ListTemplatesToolName, Annotations: ro,
			Description: "List the resource templates (parameterized URIs, RFC 6570) that the MCP servers offer. Fill one in and read it with " + ReadResourceToolName + ".",
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{"server": server, "cursor": cursor}}},
		{Name: ReadResourceToolName, Annotations: ro,
			Description: "Read one resource of an MCP server by its URI (from " + ListResourcesToolName + ", or a filled-in template).",
			InputSchema: map[string]any{"type": "object", "required": []any{"server", "uri"}, "properties": map[string]any{
				"server": map[string]any{"type": "string", "description": "The MCP server that offers the resource."},
				"uri":    map[string]any{"type": "string", "description": "The resource URI."},
			}}},
	}
	out := make([]*Tool, len(specs))
	for i, spec := range specs {
		out[i] = &Tool{ToolInfo: catalog.ToolInfo{Tool: spec, Name: spec.Name, ModelName: spec.Name, ModelVisible: true},
			Exposure: Builtin, Parallel: true}
	}
	return out
}

// resourceEntry is one listed resource or template as the model reads it.
type resourceEntry struct {
	Server      string `json:"server"`
	URI         string `json:"uri,omitempty"`
	URITemplate string `json:"uriTemplate,omitempty"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	Size        int64  `json:"size,omitempty"`
}

// callResourceTool serves a model call of one of the resource tools.
// Reads are not tool calls of the server and do not go through the
// approval chain: what a model may read is decided per server by
// enabled_resources / disabled_resources (the manager refuses the rest).
// Every call whose arguments parse and whose server (if named) is
// configured is recorded (tool_call_begin / tool_call_end, with the server
// and the tool's name) in the event stream and so in the audit log,
// allowed or refused; malformed calls are answered without a record.
func (s *Step) callResourceTool(ctx context.Context, req CallRequest, t *Tool, started time.Time) CallResult {
	var in struct {
		Server *string `json:"server"`
		Cursor *string `json:"cursor"`
		URI    *string `json:"uri"`
	}
	args, err := execution.ParseArguments(req.Arguments)
	if err == nil && args != nil {
		err = json.Unmarshal(args, &in)
	}
	if err != nil {
		return s.ended(req.CallID, t, started, fmt.Errorf("invalid arguments for %s: %w", t.ModelName, err))
	}
	server := ""
	if in.Server != nil {
		server = *in.Server
	}
	if server != "" {
		if _, ok := s.cat.Servers[server]; !ok {
			return s.ended(req.CallID, t, started, fmt.Errorf("unknown MCP server %q; %s lists the servers that offer resources", server, ListResourcesToolName))
		}
	}
	call := events.Call{CallID: req.CallID, SessionID: s.opts.SessionID, Server: server, Tool: t.ModelName, ModelName: t.ModelName}
	rawArgs := args
	if rawArgs == nil {
		rawArgs = json.RawMessage(`{}`)
	}
	s.opts.Events.Emit(events.ToolCallBegin{At: started, Call: call, Arguments: rawArgs})
	var raw *mcp.CallToolResult
	switch t.ModelName {
	case ReadResourceToolName:
		if server == "" || in.URI == nil || *in.URI == "" {
			return s.endedAfterBegin(call, t, started, events.CallFailed, errors.New("read_mcp_resource needs server and uri"))
		}
		reader, ok := s.opts.Catalogs.(ResourceReader)
		if !ok {
			return s.endedAfterBegin(call, t, started, events.CallFailed, errors.New("this host cannot read resources"))
		}
		res, err := reader.ReadResource(ctx, server, *in.URI)
		if err != nil {
			return s.endedAfterBegin(call, t, started, events.CallFailed, fmt.Errorf("reading %q from MCP server %q: %w", *in.URI, server, err))
		}
		raw = readResult(res)
	default:
		var entries []resourceEntry
		if t.ModelName == ListResourcesToolName {
			for _, r := range s.cat.Resources {
				if server == "" || r.Server == server {
					x := r.Resource
					entries = append(entries, resourceEntry{Server: r.Server, URI: x.URI, Name: x.Name, Title: x.Title, Description: x.Description, MIMEType: x.MIMEType, Size: x.Size})
				}
			}
		} else {
			for _, r := range s.cat.Templates {
				if server == "" || r.Server == server {
					x := r.Template
					entries = append(entries, resourceEntry{Server: r.Server, URITemplate: x.URITemplate, Name: x.Name, Title: x.Title, Description: x.Description, MIMEType: x.MIMEType})
				}
			}
		}
		start := 0
		if in.Cursor != nil && *in.Cursor != "" {
			n, err := strconv.Atoi(*in.Cursor)
			if err != nil || n < 0 || n > len(entries) {
				return s.endedAfterBegin(call, t, started, events.CallFailed, fmt.Errorf("invalid cursor %.40q: pass the nextCursor of the previous page, or none", *in.Cursor))
			}
			start = n
		}
		end := min(start+resourcePageSize, len(entries))
		page := struct {
			Entries    []resourceEntry `json:"resources,omitempty"`
			Templates  []resourceEntry `json:"resourceTemplates,omitempty"`
			NextCursor string          `json:"nextCursor,omitempty"`
		}{}
		if t.ModelName == ListResourcesToolName {
			page.Entries = append([]resourceEntry{}, entries[start:end]...)
		} else {
			page.Templates = append([]resourceEntry{}, entries[start:end]...)
		}
		if end < len(entries) {
			page.NextCursor = strconv.Itoa(end)
		}
		b, _ := json.Marshal(page)
		var structured map[string]any
		_ = json.Unmarshal(b, &structured)
		raw = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: structured}
	}
	wall := s.opts.Now().Sub(started)
	s.opts.Events.Emit(events.ToolCallEnd{At: s.opts.Now(), Call: call, Status: events.CallCompleted, Duration: wall,
		Result: execution.EventProjection(raw, nil)})
	return CallResult{CallID: req.CallID, Status: events.CallCompleted, Raw: raw, Tool: t, Reached: t.ModelName == ReadResourceToolName,
		wall: wall, model: s.opts.Model}
}

// readResult puts a resources/read answer in the shape of a tool result,
// so it is projected for the model like one (text within the output
// budget, images only for models that take them).
func readResult(res *mcp.ReadResourceResult) *mcp.CallToolResult {
	out := &mcp.CallToolResult{}
	for _, c := range res.Contents {
		if c == nil {
			continue
		}
		switch {
		case c.Blob != nil && strings.HasPrefix(c.MIMEType, "image/"):
			out.Content = append(out.Content, &mcp.ImageContent{Data: c.Blob, MIMEType: c.MIMEType})
		case c.Blob != nil && strings.HasPrefix(c.MIMEType, "audio/"):
			out.Content = append(out.Content, &mcp.AudioContent{Data: c.Blob, MIMEType: c.MIMEType})
		default:
			out.Content = append(out.Content, &mcp.EmbeddedResource{Resource: c})
		}
	}
	if len(out.Content) == 0 {
		out.Content = []mcp.Content{&mcp.TextContent{Text: "(the resource is empty)"}}
	}
	return out
}
