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
	"github.com/toolgate/toolgate/host/pipeline"
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

// callResourceTool serves a model call of one of the resource tools
// through the pipeline: read_mcp_resource as a resource read of the
// server (admitted and audited, never put to approval: what a model may
// read is decided per server by enabled_resources / disabled_resources,
// and the manager refuses the rest), the list tools as built-ins that
// answer from the step's catalog. Malformed calls (bad arguments, an
// unknown server, a read without server and uri) are answered without a
// record.
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
	if t.ModelName == ReadResourceToolName {
		if server == "" || in.URI == nil || *in.URI == "" {
			return s.ended(req.CallID, t, started, errors.New("read_mcp_resource needs server and uri"))
		}
		out := s.do(ctx, t, pipeline.Request{Kind: pipeline.ResourceRead, ID: req.CallID, SessionID: s.opts.SessionID,
			Server: server, URI: *in.URI, ModelName: *in.URI, Started: started})
		switch {
		case out.Err != nil && out.Status != events.CallDenied:
			out.Err = fmt.Errorf("reading %q from MCP server %q: %w", *in.URI, server, out.Err)
			out.Raw = errorResult(out.Err.Error())
		case out.Err == nil:
			out.Raw = readResult(out.resource)
		}
		return out
	}
	return s.do(ctx, t, pipeline.Request{Kind: pipeline.Builtin, ID: req.CallID, SessionID: s.opts.SessionID,
		Server: server, Name: t.ModelName, ModelName: t.ModelName, Arguments: args, Started: started,
		Run: func(context.Context) (*mcp.CallToolResult, error) {
			return s.listResources(t.ModelName, server, in.Cursor)
		}})
}

// listResources is one page of list_mcp_resources or
// list_mcp_resource_templates from the step's catalog.
func (s *Step) listResources(tool, server string, cursor *string) (*mcp.CallToolResult, error) {
	var entries []resourceEntry
	if tool == ListResourcesToolName {
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
	if cursor != nil && *cursor != "" {
		n, err := strconv.Atoi(*cursor)
		if err != nil || n < 0 || n > len(entries) {
			return nil, fmt.Errorf("invalid cursor %.40q: pass the nextCursor of the previous page, or none", *cursor)
		}
		start = n
	}
	end := min(start+resourcePageSize, len(entries))
	page := struct {
		Entries    []resourceEntry `json:"resources,omitempty"`
		Templates  []resourceEntry `json:"resourceTemplates,omitempty"`
		NextCursor string          `json:"nextCursor,omitempty"`
	}{}
	if tool == ListResourcesToolName {
		page.Entries = append([]resourceEntry{}, entries[start:end]...)
	} else {
		page.Templates = append([]resourceEntry{}, entries[start:end]...)
	}
	if end < len(entries) {
		page.NextCursor = strconv.Itoa(end)
	}
	return jsonResult(page), nil
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
