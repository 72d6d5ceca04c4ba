package manager

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/catalog"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/launch"
	"github.com/toolgate/toolgate/host/mcpclient"
)

// Snapshot is what every ready server lists (tools, resources, templates,
// prompts) at one revision, after filters and naming. It is
// immutable: a new revision is a new Snapshot.
type Snapshot struct {
	Revision uint64
	// Tools are normalized across all servers, sorted by raw identity.
	Tools []catalog.ToolInfo
	// Resources, Templates and Prompts are what the ready servers list
	// beyond tools, after their filters, in config order, with the same
	// revision as Tools.
	Resources []catalog.ResourceInfo
	Templates []catalog.TemplateInfo
	Prompts   []catalog.PromptInfo
	// Servers describes each ready server, by name.
	Servers map[string]ServerInfo
}

// ServerInfo is what the rest of the host may know about a ready server.
type ServerInfo struct {
	Instructions string
	Capabilities *mcp.ServerCapabilities
	// ParallelToolCalls is the supports_parallel_tool_calls opt-in.
	ParallelToolCalls bool
	Config            config.Server
}

// Snapshot returns the current snapshot. Normalization runs once per
// revision; callers share the result.
func (m *Manager) Snapshot() *Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cached != nil {
		return m.cached
	}
	var raw []catalog.RawTool
	infos := map[string]ServerInfo{}
	for _, name := range m.order {
		s := m.servers[name]
		if s.status != events.StatusReady {
			continue
		}
		for _, t := range s.tools {
			raw = append(raw, catalog.RawTool{Server: name, Tool: t})
		}
		info := ServerInfo{ParallelToolCalls: s.cfg.ParallelToolCalls, Config: s.cfg}
		if s.init != nil {
			info.Instructions, info.Capabilities = s.init.Instructions, s.init.Capabilities
		}
		infos[name] = info
	}
	unprefixed := map[string]bool{}
	for _, name := range m.order {
		if !m.servers[name].cfg.Prefix {
			unprefixed[name] = true
		}
	}
	m.cached = &Snapshot{
		Revision: m.revision,
		Tools: catalog.Normalize(raw, catalog.Options{
			NameLimit:  m.limit,
			Unprefixed: func(s string) bool { return unprefixed[s] },
		}),
		Servers: infos,
	}
	m.offersOf(m.cached)
	return m.cached
}

// Revision returns the current catalog revision without normalizing.
func (m *Manager) Revision() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.revision
}

// Sentinel errors of CallTool. Each is wrapped in a message naming the
// server and tool.
var (
	// ErrUnknownServer: no server block has that name.
	ErrUnknownServer = errors.New("unknown MCP server")
	// ErrToolDisabled: enabled_tools/disabled_tools exclude the tool.
	ErrToolDisabled = errors.New("tool is disabled")
	// ErrNotReady: the server failed, was cancelled, or is disabled.
	ErrNotReady = errors.New("MCP server is not ready")
)

// CallTool routes one tools/call to server's raw tool. A server still
// starting is waited for (bounded by ctx). opts.Timeout zero means the
// server's tool_timeout_sec.
func (m *Manager) CallTool(ctx context.Context, server, tool string, args any, meta mcp.Meta, opts mcpclient.CallOptions) (*mcp.CallToolResult, error) {
	m.mu.Lock()
	s, ok := m.servers[server]
	var filter catalog.Filter
	var toolTimeout time.Duration
	if ok {
		filter, toolTimeout = s.filter, s.cfg.ToolTimeout
	}
	m.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownServer, server)
	}
	if !filter.Allows(tool) {
		return nil, fmt.Errorf("%w: tool %q is disabled for MCP server %q", ErrToolDisabled, tool, server)
	}
	select {
	case <-s.settled:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for MCP server %q to start: %w", server, ctx.Err())
	}
	m.mu.Lock()
	c, status, serr := s.client, s.status, s.err
	m.mu.Unlock()
	if c == nil || status != events.StatusReady {
		return nil, notReady(server, status, serr)
	}
	if opts.Timeout == 0 {
		opts.Timeout = toolTimeout
	}
	return c.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args, Meta: meta}, opts)
}

// Redactor returns what replaces the secrets server was given (see
// mcpclient.Client.Redact) and whether its block wants them replaced in
// the results the model gets too (redact_results). A block with
// redact_secret_formats = true gets well-known credential formats
// replaced in results as well. For a server with no running client it
// returns nil.
func (m *Manager) Redactor(server string) (redact func(string) string, inResults bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.servers[server]
	if !ok || s.client == nil {
		return nil, false
	}
	if s.cfg.RedactSecretFormats {
		values := s.client.Redact
		if !s.cfg.RedactResults {
			values = func(text string) string { return text }
		}
		return func(text string) string { return mcpclient.RedactSecretFormats(values(text)) }, true
	}
	return s.client.Redact, s.cfg.RedactResults
}

// NotReady says why server cannot take calls now (errors.Is ErrNotReady):
// it failed, crashed and waits to restart, is starting, or is disabled.
// It is nil for a ready server and for a name no block declares.
func (m *Manager) NotReady(server string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.servers[server]
	if !ok || s.client != nil && s.status == events.StatusReady {
		return nil
	}
	return notReady(server, s.status, s.err)
}

func notReady(server, status string, cause error) error {
	if cause != nil {
		return fmt.Errorf("%w: MCP server %q is %s: %v", ErrNotReady, server, status, cause)
	}
	return fmt.Errorf("%w: MCP server %q is %s", ErrNotReady, server, status)
}

// ServerStatus is one server as `toolgate servers` shows it.
type ServerStatus struct {
	Name        string `json:"name"`
	Transport   string `json:"transport"`
	Status      string `json:"status"`
	Error       string `json:"error,omitempty"`
	Tools       int    `json:"tools"`
	Resources   int    `json:"resources,omitempty"`
	Templates   int    `json:"resource_templates,omitempty"`
	Prompts     int    `json:"prompts,omitempty"`
	Protocol    string `json:"protocol,omitempty"`
	ServerName  string `json:"server_name,omitempty"`
	ServerVer   string `json:"server_version,omitempty"`
	Required    bool   `json:"required"`
	Environment string `json:"environment,omitempty"`
	Launcher    string `json:"launcher,omitempty"`
	// Containment is how a stdio server and everything it starts are
	// held so that none outlives toolgate: "cgroup" or "subreaper"
	// (Linux), "process-group" (other Unixes), "job-object" (Windows).
	// For a launcher plugin it is the plugin process's, which holds what
	// its local executor starts.
	Containment string `json:"containment,omitempty"`
	Restarts    int    `json:"restarts"`
	// StartupRetries counts attempts to start the server again after its
	// first start failed (retry_startup).
	StartupRetries int `json:"startup_retries"`
	// Degraded says why a ready server is usable but not whole (it lists
	// more tools than max_tools: only the first are kept); "" when whole.
	Degraded string `json:"degraded,omitempty"`
	// CrashLoop counts crashes in a row, each soon after a (re)start (see
	// RestartPolicy.StableAfter); 0 or 1 is no loop.
	CrashLoop int `json:"crash_loop,omitempty"`
	Pid       int `json:"pid,omitempty"`
	// Auth is how an HTTP server authenticates; see authState.
	Auth string `json:"auth,omitempty"`
}

// Status returns every server block in config order.
func (m *Manager) Status() []ServerStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]ServerStatus, 0, len(m.order))
	for _, name := range m.order {
		s := m.servers[name]
		st := ServerStatus{
			Name:           name,
			Transport:      string(s.cfg.Transport),
			Status:         s.status,
			Tools:          len(s.tools),
			Resources:      len(s.offers.resources),
			Templates:      len(s.offers.templates),
			Prompts:        len(s.offers.prompts),
			Required:       s.cfg.Required,
			Restarts:       s.restarts,
			StartupRetries: s.startupRetries,
			Auth:           m.authState(s.cfg, s.err),
		}
		if s.cfg.Transport == config.TransportStdio {
			st.Environment = s.cfg.Environment
			if st.Environment == "" {
				st.Environment = config.LocalEnvironment
			}
			st.Launcher = s.target.LauncherName
			st.Containment = launch.Containment()
		}
		if s.err != nil {
			st.Error = s.err.Error()
		}
		if s.degraded != nil && s.status == events.StatusReady {
			st.Degraded = s.degraded.Error()
		}
		if s.status != events.StatusReady || time.Since(s.readyAt) < m.opts.Restart.StableAfter {
			st.CrashLoop = s.crashes // a loop that has settled is history
		}
		if s.init != nil {
			st.Protocol = s.init.ProtocolVersion
			if s.init.ServerInfo != nil {
				st.ServerName, st.ServerVer = s.init.ServerInfo.Name, s.init.ServerInfo.Version
			}
		}
		if s.client != nil {
			st.Pid = s.client.Pid()
		}
		out = append(out, st)
	}
	return out
}
