package clients

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	toml "github.com/pelletier/go-toml/v2"
)

// Server is one MCP server as a client's file defines it, in the terms
// toolgate understands. Values are as written in the client's file:
// variable references ("${GITHUB_TOKEN}") are still in them.
type Server struct {
	Name string

	// stdio
	Command string
	Args    []string
	Env     []KV
	EnvVars []string // Codex env_vars: names passed through
	Cwd     string

	// HTTP
	URL               string
	SSE               bool // the legacy HTTP+SSE transport
	Headers           []KV
	EnvHeaders        []KV // header → variable name (Codex env_http_headers)
	BearerTokenEnvVar string

	Disabled          bool
	StartupTimeoutSec float64 // 0 = unset
	ToolTimeoutSec    float64 // 0 = unset
	EnabledTools      []string
	DisabledTools     []string

	// Unsupported lists what the client's entry says that toolgate
	// cannot express, one line each, never with a value.
	Unsupported []string

	// Where a JSON entry sits: obj.members[index].
	obj   *jsonValue
	index int
}

// KV is one name/value pair, kept in the file's order.
type KV struct{ K, V string }

// File is a client's config file, parsed.
type File struct {
	Client  Client
	Path    string
	Servers []Server
	// Inputs are VS Code's "inputs" ids, for references ${input:id}.
	Inputs []string

	src  []byte
	root *jsonValue // JSON formats
	env  Env
}

// Parse reads a client's config file. src may be empty (no file yet).
// env.Cwd selects Claude Code's local-scope servers in ~/.claude.json.
func Parse(c Client, path string, src []byte, env Env) (*File, error) {
	f := &File{Client: c, Path: path, src: src, env: env}
	switch c.Format {
	case FormatCodex:
		return f, f.parseCodex()
	default:
		root, err := parseJSONC(path, src)
		if err != nil {
			return nil, fmt.Errorf("%w. Fix the file, or pass another with --from", err)
		}
		if root.kind != jsonObject {
			return nil, fmt.Errorf("%s: the file is not a JSON object; pass the client's MCP config with --from", path)
		}
		f.root = root
		return f, f.parseJSON()
	}
}

// serversKey is the member holding the servers.
func (c Client) serversKey() string {
	if c.Format == FormatVSCode {
		return "servers"
	}
	return "mcpServers"
}

// serverObjects returns the objects holding server entries: for Claude
// Code's ~/.claude.json also the current project's local-scope servers
// (projects["<dir>"].mcpServers, where `claude mcp add` writes by
// default).
func (f *File) serverObjects() []*jsonValue {
	out := []*jsonValue{f.root.member(f.Client.serversKey())}
	if f.Client.ID == "claude-code" && f.env.Cwd != "" {
		if local := f.root.member("projects").member(f.env.Cwd).member("mcpServers"); local != nil {
			out = append(out, local)
		}
	}
	return out
}

func (f *File) parseJSON() error {
	for _, in := range f.root.member("inputs").elemsOrNil() {
		if id := in.member("id"); id != nil && id.kind == jsonString {
			f.Inputs = append(f.Inputs, id.str)
		}
	}
	for _, obj := range f.serverObjects() {
		if obj == nil {
			continue
		}
		if obj.kind != jsonObject {
			return fmt.Errorf("%s: %q is not an object of servers", f.Path, f.Client.serversKey())
		}
		for i, m := range obj.members {
			s, err := f.jsonServer(m.key, m.value)
			if err != nil {
				return err
			}
			s.obj, s.index = obj, i
			f.Servers = append(f.Servers, s)
		}
	}
	return nil
}

func (v *jsonValue) membersOrNil() []jsonMember {
	if v == nil || v.kind != jsonObject {
		return nil
	}
	return v.members
}

func (v *jsonValue) elemsOrNil() []*jsonValue {
	if v == nil || v.kind != jsonArray {
		return nil
	}
	return v.elems
}

func (f *File) jsonServer(name string, v *jsonValue) (Server, error) {
	s := Server{Name: name}
	if v.kind != jsonObject {
		return s, fmt.Errorf("%s: server %q is not an object", f.Path, name)
	}
	flavor := f.Client.flavor
	bad := func(field, want string) error {
		return fmt.Errorf("%s: server %q: %s must be %s", f.Path, name, field, want)
	}
	for _, m := range v.members {
		val := m.value
		switch m.key {
		case "command":
			if val.kind != jsonString {
				return s, bad("command", "a string")
			}
			s.Command = val.str
		case "args", "includeTools", "excludeTools":
			list, ok := stringList(val.any())
			if !ok {
				return s, bad(m.key, "a list of strings")
			}
			switch m.key {
			case "args":
				s.Args = list
			case "includeTools":
				s.EnabledTools = list
			default:
				s.DisabledTools = list
			}
		case "env", "headers":
			kvs, ok := objectKVs(val)
			if !ok {
				return s, bad(m.key, "an object of strings")
			}
			if m.key == "env" {
				s.Env = kvs
			} else {
				s.Headers = kvs
			}
		case "cwd":
			if val.kind != jsonString {
				return s, bad("cwd", "a string")
			}
			s.Cwd = val.str
		case "url", "httpUrl":
			if val.kind != jsonString {
				return s, bad(m.key, "a string")
			}
			s.URL = val.str
			// Gemini's url is SSE; its httpUrl is Streamable HTTP.
			s.SSE = s.SSE || (flavor == "gemini" && m.key == "url")
		case "type":
			switch val.str {
			case "stdio", "http", "streamable-http", "streamableHttp":
			case "sse":
				s.SSE = true
			default:
				s.Unsupported = append(s.Unsupported, fmt.Sprintf("type %q is not a transport toolgate knows", val.str))
			}
		case "timeout":
			if n, err := strconv.ParseFloat(val.num, 64); err == nil && val.kind == jsonNumber && n > 0 {
				s.ToolTimeoutSec = n / 1000 // Gemini: milliseconds
			}
		case "disabled":
			s.Disabled = val.kind == jsonBool && val.b
		case "trust":
			if val.kind == jsonBool && val.b {
				s.Unsupported = append(s.Unsupported, "trust = true (skipping confirmations): toolgate's approval chain decides instead")
			}
		case "description":
			// For people; toolgate has no place for it.
		case "envFile":
			s.Unsupported = append(s.Unsupported, "envFile: toolgate does not read env files; list the variables in env_vars and set them in toolgate's environment")
		default:
			s.Unsupported = append(s.Unsupported, fmt.Sprintf("%s (not known to toolgate for %s)", m.key, f.Client.Name))
		}
	}
	if err := s.check(f.Path); err != nil {
		return s, err
	}
	return s, nil
}

// check rejects an entry that is neither stdio nor HTTP.
func (s *Server) check(path string) error {
	switch {
	case s.Command == "" && s.URL == "":
		return fmt.Errorf("%s: server %q has neither a command nor a url; fix or remove it in the client, then import again", path, s.Name)
	case s.Command != "" && s.URL != "":
		return fmt.Errorf("%s: server %q has both a command and a url; keep one in the client, then import again", path, s.Name)
	}
	return nil
}

func stringList(v any) ([]string, bool) {
	arr, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func objectKVs(v *jsonValue) ([]KV, bool) {
	if v.kind != jsonObject {
		return nil, false
	}
	out := make([]KV, 0, len(v.members))
	for _, m := range v.members {
		switch m.value.kind {
		case jsonString:
			out = append(out, KV{m.key, m.value.str})
		case jsonNumber, jsonBool:
			// Clients pass these as strings; keep the text.
			out = append(out, KV{m.key, fmt.Sprint(m.value.any())})
		default:
			return nil, false
		}
	}
	return out, true
}

// codexFields are the keys of a Codex [mcp_servers.<name>] table that
// toolgate reads.
var codexFields = []string{"command", "args", "env", "env_vars", "cwd", "url", "bearer_token_env_var", "http_headers",
	"env_http_headers", "enabled", "enabled_tools", "disabled_tools", "startup_timeout_sec", "startup_timeout_ms", "tool_timeout_sec"}

func (f *File) parseCodex() error {
	var doc map[string]any
	if err := toml.Unmarshal(f.src, &doc); err != nil {
		var de *toml.DecodeError
		if errorsAs(err, &de) {
			row, col := de.Position()
			return fmt.Errorf("%s:%d:%d: %s. Fix the file, or pass another with --from", f.Path, row, col, de.Error())
		}
		return fmt.Errorf("%s: %w. Fix the file, or pass another with --from", f.Path, err)
	}
	servers, _ := doc["mcp_servers"].(map[string]any)
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	// TOML tables have no order once decoded; the file's order is the
	// order the headers appear in.
	order := codexOrder(f.src)
	sort.SliceStable(names, func(i, j int) bool { return order[names[i]] < order[names[j]] })
	for _, name := range names {
		t, ok := servers[name].(map[string]any)
		if !ok {
			return fmt.Errorf("%s: mcp_servers.%s is not a table", f.Path, name)
		}
		s, err := codexServer(f.Path, name, t)
		if err != nil {
			return err
		}
		f.Servers = append(f.Servers, s)
	}
	return nil
}

func codexServer(path, name string, t map[string]any) (Server, error) {
	s := Server{Name: name}
	bad := func(field, want string) error {
		return fmt.Errorf("%s: mcp_servers.%s.%s must be %s", path, name, field, want)
	}
	// Where each plain field goes, by its kind of value.
	strs := map[string]*string{"command": &s.Command, "cwd": &s.Cwd, "url": &s.URL, "bearer_token_env_var": &s.BearerTokenEnvVar}
	lists := map[string]*[]string{"args": &s.Args, "env_vars": &s.EnvVars, "enabled_tools": &s.EnabledTools, "disabled_tools": &s.DisabledTools}
	tables := map[string]*[]KV{"env": &s.Env, "http_headers": &s.Headers, "env_http_headers": &s.EnvHeaders}
	for _, k := range sortedKeys(t) {
		v := t[k]
		var ok bool
		if dst := strs[k]; dst != nil {
			if *dst, ok = v.(string); !ok {
				return s, bad(k, "a string")
			}
			continue
		}
		if dst := lists[k]; dst != nil {
			if *dst, ok = stringList(v); !ok {
				return s, bad(k, "a list of strings")
			}
			continue
		}
		if dst := tables[k]; dst != nil {
			m, isMap := v.(map[string]any)
			if !isMap {
				return s, bad(k, "a table of strings")
			}
			for _, mk := range sortedKeys(m) {
				str, isStr := m[mk].(string)
				if !isStr {
					return s, bad(k+"."+mk, "a string")
				}
				*dst = append(*dst, KV{mk, str})
			}
			continue
		}
		switch k {
		case "enabled":
			var b bool
			if b, ok = v.(bool); !ok {
				return s, bad(k, "true or false")
			}
			s.Disabled = !b
		case "startup_timeout_sec", "tool_timeout_sec", "startup_timeout_ms":
			n, isNum := number(v)
			if !isNum || n <= 0 {
				return s, bad(k, "a positive number")
			}
			switch k {
			case "startup_timeout_sec":
				s.StartupTimeoutSec = n
			case "startup_timeout_ms":
				if s.StartupTimeoutSec == 0 {
					s.StartupTimeoutSec = n / 1000
				}
			default:
				s.ToolTimeoutSec = n
			}
		default:
			s.Unsupported = append(s.Unsupported, fmt.Sprintf("%s (not known to toolgate for Codex)", k))
		}
	}
	return s, s.check(path)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
