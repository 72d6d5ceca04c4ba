package clients

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Format is the shape of a client's config file.
type Format int

const (
	// FormatMCPServers is a JSON(C) object with "mcpServers": {name: {...}}
	// (Claude Desktop, Claude Code, Cursor, Gemini CLI).
	FormatMCPServers Format = iota
	// FormatVSCode is VS Code's mcp.json: "servers" and "inputs".
	FormatVSCode
	// FormatCodex is Codex CLI's config.toml: [mcp_servers.<name>].
	FormatCodex
)

// Scope says which of a client's files: the user's or the project's.
type Scope string

const (
	ScopeUser    Scope = "user"
	ScopeProject Scope = "project"
)

// Client is one MCP client whose config toolgate reads and writes.
type Client struct {
	ID     string // command-line name: claude-desktop, claude-code, codex, cursor, vscode, gemini
	Name   string // for people
	Format Format
	// Scopes the client has, the default first.
	Scopes []Scope
	// StartupTimeout says how long the client waits for an MCP server to
	// start and list its tools, and how to change it; toolgate's first
	// list must answer well within it.
	StartupTimeout string
	// flavor names the dialect within FormatMCPServers.
	flavor string
}

// Clients lists every client, in the order help texts show them.
var Clients = []Client{
	{ID: "claude-desktop", Name: "Claude Desktop", Format: FormatMCPServers, Scopes: []Scope{ScopeUser}, flavor: "claude",
		StartupTimeout: "Claude Desktop documents no startup limit"},
	{ID: "claude-code", Name: "Claude Code", Format: FormatMCPServers, Scopes: []Scope{ScopeUser, ScopeProject}, flavor: "claude",
		StartupTimeout: "Claude Code waits MCP_TIMEOUT (milliseconds, in its environment) for a server to start"},
	{ID: "codex", Name: "Codex CLI", Format: FormatCodex, Scopes: []Scope{ScopeUser},
		StartupTimeout: "Codex waits 10 s for a server to start and list its tools (startup_timeout_sec per server changes it)"},
	{ID: "cursor", Name: "Cursor", Format: FormatMCPServers, Scopes: []Scope{ScopeUser, ScopeProject}, flavor: "cursor",
		StartupTimeout: "Cursor documents no startup limit"},
	{ID: "vscode", Name: "VS Code", Format: FormatVSCode, Scopes: []Scope{ScopeProject, ScopeUser},
		StartupTimeout: "VS Code documents no startup limit; it shows the server as starting"},
	{ID: "gemini", Name: "Gemini CLI", Format: FormatMCPServers, Scopes: []Scope{ScopeUser, ScopeProject}, flavor: "gemini",
		StartupTimeout: "Gemini CLI bounds requests by timeout (milliseconds, per server; default 10 minutes)"},
}

// ErrUnknownClient is returned by Lookup for a name it does not know.
var ErrUnknownClient = errors.New("unknown client")

// Lookup returns the client with the given ID.
func Lookup(id string) (Client, error) {
	for _, c := range Clients {
		if c.ID == id {
			return c, nil
		}
	}
	return Client{}, fmt.Errorf("%w %q: choose one of %s", ErrUnknownClient, id, strings.Join(IDs(), ", "))
}

// IDs lists the client IDs.
func IDs() []string {
	out := make([]string, len(Clients))
	for i, c := range Clients {
		out[i] = c.ID
	}
	return out
}

// Env is what the default paths depend on. Callers fill it from the
// process; tests pass another OS's values.
type Env struct {
	GOOS    string // runtime.GOOS
	Home    string // the user's home directory
	Cwd     string // the project directory
	AppData string // %APPDATA% on Windows
	// XDGConfigHome is $XDG_CONFIG_HOME on Linux ("" = ~/.config).
	XDGConfigHome string
	// CodexHome is $CODEX_HOME ("" = ~/.codex).
	CodexHome string
}

// join joins path elements with the separator of e.GOOS, so that the
// paths of another OS come out right in tests.
func (e Env) join(elem ...string) string {
	sep := "/"
	if e.GOOS == "windows" {
		sep = `\`
	}
	var parts []string
	for i, p := range elem {
		if i > 0 {
			p = strings.TrimLeft(p, `/\`)
		}
		if i < len(elem)-1 {
			p = strings.TrimRight(p, `/\`)
		}
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, sep)
}

// Path is where the client keeps its MCP servers for scope on e.GOOS.
func (c Client) Path(scope Scope, e Env) (string, error) {
	if scope == "" {
		scope = c.Scopes[0]
	}
	if !slices.Contains(c.Scopes, scope) {
		return "", fmt.Errorf("%s has no %s-scope MCP config; use --scope %s, or --from FILE", c.Name, scope, c.Scopes[0])
	}
	if scope == ScopeProject {
		if e.Cwd == "" {
			return "", errors.New("the project directory is unknown; pass --from FILE")
		}
		switch c.ID {
		case "claude-code":
			return e.join(e.Cwd, ".mcp.json"), nil
		case "cursor":
			return e.join(e.Cwd, ".cursor", "mcp.json"), nil
		case "vscode":
			return e.join(e.Cwd, ".vscode", "mcp.json"), nil
		case "gemini":
			return e.join(e.Cwd, ".gemini", "settings.json"), nil
		}
	}
	if e.Home == "" {
		return "", errors.New("the home directory is unknown; pass --from FILE")
	}
	// appConfig is the per-user application data directory.
	appConfig := func() string {
		switch e.GOOS {
		case "darwin":
			return e.join(e.Home, "Library", "Application Support")
		case "windows":
			if e.AppData != "" {
				return e.AppData
			}
			return e.join(e.Home, "AppData", "Roaming")
		}
		if e.XDGConfigHome != "" {
			return e.XDGConfigHome
		}
		return e.join(e.Home, ".config")
	}
	switch c.ID {
	case "claude-desktop":
		return e.join(appConfig(), "Claude", "claude_desktop_config.json"), nil
	case "claude-code":
		return e.join(e.Home, ".claude.json"), nil
	case "codex":
		if e.CodexHome != "" {
			return e.join(e.CodexHome, "config.toml"), nil
		}
		return e.join(e.Home, ".codex", "config.toml"), nil
	case "cursor":
		return e.join(e.Home, ".cursor", "mcp.json"), nil
	case "vscode":
		return e.join(appConfig(), "Code", "User", "mcp.json"), nil
	case "gemini":
		return e.join(e.Home, ".gemini", "settings.json"), nil
	}
	return "", fmt.Errorf("%w %q", ErrUnknownClient, c.ID)
}
