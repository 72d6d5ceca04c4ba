package config

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

type wantDiag struct {
	warning bool
	summary string // substring
	detail  string // substring
	line    int
}

func (w wantDiag) matches(d *hcl.Diagnostic) bool {
	sev := hcl.DiagError
	if w.warning {
		sev = hcl.DiagWarning
	}
	return d.Severity == sev &&
		strings.Contains(d.Summary, w.summary) &&
		strings.Contains(d.Detail, w.detail) &&
		d.Subject != nil && d.Subject.Start.Line == w.line
}

func describe(diags hcl.Diagnostics) string {
	var b strings.Builder
	for _, d := range diags {
		line := 0
		if d.Subject != nil {
			line = d.Subject.Start.Line
		}
		sev := "error"
		if d.Severity == hcl.DiagWarning {
			sev = "warning"
		}
		fmt.Fprintf(&b, "\n  %s line %d: %s: %s", sev, line, d.Summary, d.Detail)
	}
	return b.String()
}

// checkDiags asserts that diags are exactly want, in order.
func checkDiags(t *testing.T, diags hcl.Diagnostics, want []wantDiag) {
	t.Helper()
	ok := len(diags) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = want[i].matches(diags[i])
	}
	if !ok {
		var w strings.Builder
		for _, d := range want {
			fmt.Fprintf(&w, "\n  warning=%v line %d: %q / %q", d.warning, d.line, d.summary, d.detail)
		}
		t.Errorf("diagnostics:%s\nwant:%s", describe(diags), w.String())
	}
}

const hookPlugin = `plugin "policy" {
  kind = "hook"
  path = "p"
}
`

func TestLoadDiagnostics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		env  map[string]string
		want []wantDiag
	}{
		{
			name: "unknown server field",
			src: `server "s" {
  comand = "x"
}`,
			want: []wantDiag{{summary: "Unsupported argument", detail: `Did you mean "command"?`, line: 2}},
		},
		{
			name: "unknown block type",
			src: `servers "s" {
  command = "x"
}`,
			want: []wantDiag{{summary: "Unsupported block type", detail: `Did you mean "server"?`, line: 1}},
		},
		{
			name: "unknown field in a nested block",
			src: `server "s" {
  url = "https://example.invalid/mcp"
  oauth {
    clientid = "x"
  }
}`,
			want: []wantDiag{{summary: "Unsupported argument", detail: `Did you mean "client_id"?`, line: 4}},
		},
		{
			name: "command and url",
			src: `server "s" {
  command = "x"
  url     = "https://example.invalid/mcp"
}`,
			want: []wantDiag{{summary: "Invalid transport", detail: "set either command (stdio) or url (streamable_http), not both", line: 1}},
		},
		{
			name: "neither command nor url",
			src: `

server "s" {
  args = ["--x"]
}`,
			want: []wantDiag{{summary: "Invalid transport", detail: `invalid transport: server "s" sets neither command nor url. Set command = "..." to run a stdio server, or url = "https://..."`, line: 3}},
		},
		{
			name: "http fields on stdio",
			src: `server "s" {
  command = "x"
  bearer_token_env_var = "T"
  http_headers = { A = "b" }
  env_http_headers = { A = "B" }
  oauth {
    client_id = "c"
  }
}`,
			want: []wantDiag{
				{summary: "bearer_token_env_var is not supported for stdio", detail: "bearer_token_env_var is not supported for stdio", line: 3},
				{summary: "http_headers is not supported for stdio", line: 4},
				{summary: "env_http_headers is not supported for stdio", line: 5},
				{summary: "oauth is not supported for stdio", detail: "oauth is not supported for stdio", line: 6},
			},
		},
		{
			name: "stdio fields on http",
			src: `server "s" {
  url = "https://example.invalid/mcp"
  args = ["a"]
  env = { A = "b" }
  env_vars = ["HOME"]
  cwd = "."
}`,
			want: []wantDiag{
				{summary: "args is not supported for streamable_http", detail: "args is not supported for streamable_http", line: 3},
				{summary: "env is not supported for streamable_http", line: 4},
				{summary: "env_vars is not supported for streamable_http", line: 5},
				{summary: "cwd is not supported for streamable_http", line: 6},
			},
		},
		{
			name: "inline bearer token",
			src: `server "s" {
  url          = "https://example.invalid/mcp"
  bearer_token = "abc"
}`,
			want: []wantDiag{{summary: "Inline bearer token refused", detail: "Put the token in an environment variable and set bearer_token_env_var", line: 3}},
		},
		{
			name: "bearer token variable unset",
			src: `server "github" {
  url                  = "https://example.invalid/mcp"
  bearer_token_env_var = "GITHUB_TOKEN"
}`,
			want: []wantDiag{{summary: "Bearer token not set", detail: "Environment variable GITHUB_TOKEN for MCP server 'github' is not set", line: 3}},
		},
		{
			name: "bearer token variable empty",
			src: `server "github" {
  url = "https://example.invalid/mcp"

  bearer_token_env_var = "GITHUB_TOKEN"
}`,
			env:  map[string]string{"GITHUB_TOKEN": " "},
			want: []wantDiag{{summary: "Bearer token empty", detail: "Environment variable GITHUB_TOKEN for MCP server 'github' is empty", line: 4}},
		},
		{
			name: "bearer token variable unset on a disabled server is fine",
			src: `server "github" {
  url                  = "https://example.invalid/mcp"
  bearer_token_env_var = "GITHUB_TOKEN"
  enabled              = false
}`,
		},
		{
			name: "bearer_token_env_var holding a token instead of a name",
			src: `server "github" {
  url                  = "https://example.invalid/mcp"
  bearer_token_env_var = "ghp_abc-123"
}`,
			want: []wantDiag{{summary: "Invalid environment variable name", detail: "not its value", line: 3}},
		},
		{
			name: "invalid server name",
			src: `server "my server" {
  command = "x"
}`,
			want: []wantDiag{{summary: "Invalid server name", detail: "Invalid MCP server name 'my server': must match pattern ^[a-zA-Z0-9_-]+$", line: 1}},
		},
		{
			name: "duplicate server",
			src: `server "s" {
  command = "x"
}
server "s" {
  command = "y"
}`,
			want: []wantDiag{{summary: `Duplicate server "s"`, detail: "already defined at " + "", line: 4}},
		},
		{
			name: "duplicate plugin and environment",
			src: hookPlugin + `plugin "policy" {
  kind = "hook"
  path = "q"
}
environment "e" {}
environment "e" {}
`,
			want: []wantDiag{
				{summary: `Duplicate plugin "policy"`, detail: "toolgate.hcl:1,1-16", line: 5},
				{summary: `Duplicate environment "e"`, detail: "toolgate.hcl:9,1-16", line: 10},
			},
		},
		{
			name: "approval enums",
			src: `approval {
  policy      = "on_request"
  permissions = "workspace_write"
  reviewer    = "human"
}
server "s" { command = "x" }`,
			want: []wantDiag{
				{summary: "Invalid approval policy", detail: `policy must be one of "untrusted", "on-request" or "never"; "on_request" is not. Did you mean "on-request"?`, line: 2},
				{summary: "Invalid permission profile", detail: `Did you mean "workspace-write"?`, line: 3},
				{summary: "Invalid reviewer", detail: `reviewer must be one of "user" or "guardian"; "human" is not.`, line: 4},
			},
		},
		{
			name: "exposure enum, name_limit, defer_threshold",
			src: `exposure {
  mode            = "defered"
  name_limit      = 16
  defer_threshold = { tool = 5 }
}`,
			want: []wantDiag{
				{summary: "Invalid exposure mode", detail: `Did you mean "deferred"?`, line: 2},
				{summary: "Value out of range", detail: "name_limit must be between 32 and 128; 16 is not", line: 3},
				{summary: "Unsupported defer_threshold key", detail: `Did you mean "tools"?`, line: 4},
			},
		},
		{
			name: "exposure embeddings",
			src: `exposure {
  embeddings {
    url             = "localhost:11434/v1"
    api_key_env_var = "sk-123"
  }
}`,
			want: []wantDiag{
				{summary: "Missing embeddings model", detail: `model = "..."`, line: 2},
				{summary: "Invalid embeddings url", detail: "absolute http:// or https:// URL", line: 3},
				{summary: "Invalid environment variable name", detail: "api_key_env_var must name an environment variable", line: 4},
			},
		},
		{
			name: "serve max_result_bytes",
			src: `serve {
  max_result_bytes = 0
}`,
			want: []wantDiag{{summary: "Value out of range", detail: "max_result_bytes must be between 1024 and 2147483647; 0 is not", line: 2}},
		},
		{
			name: "never_defer glob",
			src: `exposure {
  never_defer = ["mcp__files__*", "mcp__[x"]
}`,
			want: []wantDiag{{summary: "Invalid glob", detail: `never_defer = "mcp__[x" is not a valid glob: "[" has no closing "]"`, line: 2}},
		},
		{
			name: "audit on_error",
			src: `audit {
  on_error = "ignore"
}`,
			want: []wantDiag{{summary: "Invalid audit on_error", detail: `must be one of "log" or "deny"`, line: 2}},
		},
		{
			name: "audit deny without a log",
			src: `audit {
  on_error = "deny"
}`,
			want: []wantDiag{{summary: "Audit on_error without an audit log", detail: `Add path = "audit.jsonl"`, line: 2}},
		},
		{
			name: "audit path twice",
			src: `audit_log = "a.jsonl"
audit {
  path = "b.jsonl"
}`,
			want: []wantDiag{{summary: "Duplicate audit log path (audit_log or audit { path })", line: 3}},
		},
		{
			name: "tool filter globs",
			src: `server "s" {
  command        = "x"
  enabled_tools  = ["read_*", "read_[/]"]
  disabled_tools = ["a***"]
}`,
			want: []wantDiag{
				{summary: "Invalid glob", detail: `matches "/", which separates segments`, line: 3},
				{summary: "Invalid glob", detail: `3 stars in a row`, line: 4},
			},
		},
		{
			name: "server enums",
			src: `server "s" {
  command                     = "x"
  default_tools_approval_mode = "Approve"
  exposure                    = "auto"
  protocol_version            = "2025-06-17"
  tool "t" {
    approval_mode = "ask"
  }
}`,
			want: []wantDiag{
				{summary: "Invalid approval mode", detail: `Did you mean "approve"?`, line: 3},
				{summary: "Invalid tool exposure", detail: `exposure must be one of "direct" or "deferred"; "auto" is not.`, line: 4},
				{summary: "Invalid protocol version", detail: `Did you mean "2025-06-18"?`, line: 5},
				{summary: "Invalid approval mode", detail: `approval_mode must be one of "auto", "prompt", "writes", "approve" or "remembered"; "ask" is not.`, line: 7},
			},
		},
		{
			name: "plugin enums",
			src: `plugin "p" {
  kind     = "hooks"
  path     = "p"
  on_error = "allow"
}`,
			want: []wantDiag{
				{summary: "Invalid plugin kind", detail: `Did you mean "hook"?`, line: 2},
				{summary: "Invalid on_error value", detail: `on_error must be one of "deny" or "skip"; "allow" is not.`, line: 4},
			},
		},
		{
			name: "env_vars source",
			src: `server "s" {
  command  = "x"
  env_vars = [
    "HOME",
    { name = "X", source = "remotely" },
  ]
}`,
			want: []wantDiag{{summary: "Invalid env_vars source", detail: `source must be one of "local" or "remote"; "remotely" is not. Did you mean "remote"?`, line: 5}},
		},
		{
			name: "env_vars remote on a local server",
			src: `server "s" {
  command  = "x"
  env_vars = ["HOME", { name = "REMOTE_TOKEN", source = "remote" }]
}`,
			want: []wantDiag{{summary: "Remote environment variable on a local server", detail: `env_vars entry "REMOTE_TOKEN" uses source "remote"`, line: 3}},
		},
		{
			name: "env_vars remote in a launcher environment is fine",
			src: `plugin "exec" {
  kind = "launcher"
  path = "launcher"
}
environment "box" { launcher = "exec" }
server "s" {
  command     = "x"
  environment = "box"
  env_vars    = [{ name = "REMOTE_TOKEN", source = "remote" }]
}`,
		},
		{
			name: "env_vars bad entries",
			src: `server "s" {
  command  = "x"
  env_vars = ["1BAD", 3, { nam = "X" }]
}`,
			want: []wantDiag{
				{summary: "Invalid environment variable name", detail: `env_vars entry "1BAD" is not a valid environment variable name`, line: 3},
				{summary: "Invalid env_vars entry", detail: `env_vars entries are names ("HOME") or objects`, line: 3},
				{summary: "Unsupported env_vars key", detail: `Did you mean "name"?`, line: 3},
			},
		},
		{
			name: "environment launcher missing or not a launcher",
			src: hookPlugin + `environment "a" {
  launcher = "exce"
}
environment "b" {
  launcher = "policy"
}`,
			want: []wantDiag{
				{summary: "Unknown plugin", detail: `environment "a" names launcher "exce", but no plugin "exce" is defined`, line: 6},
				{summary: "Wrong plugin kind", detail: `names plugin "policy" as its launcher, but that plugin has kind "hook"`, line: 9},
			},
		},
		{
			name: "server in an unknown environment is a warning",
			src: `environment "buildbox" {}
server "s" {
  command     = "x"
  environment = "buildbx"
}`,
			want: []wantDiag{{warning: true, summary: "Unknown environment", detail: `Did you mean "buildbox"?`, line: 4}},
		},
		{
			name: "timeouts",
			src: `server "s" {
  command             = "x"
  startup_timeout_sec = 0
  tool_timeout_sec    = -1
}
plugin "p" {
  kind    = "hook"
  path    = "p"
  timeout = "0s"
}
plugin "q" {
  kind    = "hook"
  path    = "q"
  timeout = "soon"
}`,
			want: []wantDiag{
				{summary: "Invalid timeout", detail: "startup_timeout_sec must be greater than zero", line: 3},
				{summary: "Invalid timeout", detail: "tool_timeout_sec must be greater than zero", line: 4},
				{summary: "Invalid timeout", detail: "timeout must be greater than zero", line: 9},
				{summary: "Invalid duration", detail: `timeout must be a duration such as "2s"`, line: 14},
			},
		},
		{
			name: "plugin sha256, missing kind and path",
			src: `plugin "p" {
  kind   = "guardian"
  path   = "p"
  sha256 = "abc"
}
plugin "q" {
}`,
			want: []wantDiag{
				{summary: "Invalid sha256", detail: "sha256 must be 64 hexadecimal characters", line: 4},
				{summary: "Missing plugin kind", detail: `plugin "q" needs kind = "hook", "guardian" or "launcher"`, line: 6},
				{summary: "Missing plugin path", line: 6},
			},
		},
		{
			name: "match and events on a non-hook plugin",
			src: `plugin "g" {
  kind   = "guardian"
  path   = "g"
  events = ["PreToolUse"]
  match {
    server = "files"
  }
}`,
			want: []wantDiag{
				{summary: "events is only for hook plugins", line: 4},
				{summary: "match is only for hook plugins", line: 5},
			},
		},
		{
			name: "hook events, globs and regex",
			src: `plugin "h" {
  kind   = "hook"
  path   = "h"
  events = ["PreToolUse", "PostTooluse"]
  match {
    server = "[files"
    regex  = "("
  }
}`,
			want: []wantDiag{
				{summary: "Invalid hook event", detail: `Did you mean "PostToolUse"?`, line: 4},
				{summary: "Invalid glob", line: 6},
				{summary: "Invalid regular expression", line: 7},
			},
		},
		{
			name: "oauth on http",
			src: `server "s" {
  url = "https://example.invalid/mcp"
  oauth {
    grant            = "client_credentials"
    private_key_file = "k.pem"
    callback_port    = 70000
  }
}`,
			want: []wantDiag{
				{summary: "Missing client_id", line: 3},
				{summary: "Value out of range", detail: "callback_port must be between 1 and 65535", line: 6},
			},
		},
		{
			name: "private_key_file without client_credentials",
			src: `server "s" {
  url = "https://example.invalid/mcp"
  oauth {
    client_id        = "c"
    private_key_file = "k.pem"
  }
}`,
			want: []wantDiag{{summary: "private_key_file needs client_credentials", line: 5}},
		},
		{
			name: "env() of an unset variable",
			src: `server "s" {
  command = env("NOPE_NOT_SET")
}`,
			want: []wantDiag{{summary: "Error in function call", detail: `Call to function "env" failed: environment variable "NOPE_NOT_SET" is not set.`, line: 2}},
		},
		{
			name: "file() of a missing file",
			src: `server "s" {
  command = "x"
  args    = [file("nope.txt")]
}`,
			want: []wantDiag{{summary: "Error in function call", detail: "no file exists at", line: 3}},
		},
		{
			name: "unknown function",
			src: `server "s" {
  command = getenv("X")
}`,
			want: []wantDiag{{summary: "Call to unknown function", line: 2}},
		},
		{
			name: "duplicate singleton in one file",
			src: `approval {
  policy = "never"
}
approval {
  policy = "untrusted"
}
audit_log = "a.jsonl"`,
			want: []wantDiag{{summary: "Duplicate approval block", detail: "the first was defined at ", line: 4}},
		},
		{
			name: "guardian reviewer without a guardian plugin",
			src: `approval {
  reviewer = "guardian"
}`,
			want: []wantDiag{{summary: "No guardian plugin", line: 2}},
		},
		{
			name: "guardian naming a hook",
			src: hookPlugin + `approval {
  reviewer = "guardian"
  guardian = "policy"
}`,
			want: []wantDiag{{summary: "Wrong plugin kind", detail: `approval names plugin "policy" as its guardian, but that plugin has kind "hook"`, line: 7}},
		},
		{
			name: "wrong value type",
			src: `server "s" {
  command  = "x"
  required = "maybe"
  args     = "--x"
}`,
			want: []wantDiag{
				{summary: "Incorrect attribute value type", detail: "a bool is required", line: 3},
				{summary: "Incorrect attribute value type", detail: "list of string required", line: 4},
			},
		},
		{
			name: "invalid url",
			src: `server "s" {
  url = "ftp://example.invalid/mcp"
}`,
			want: []wantDiag{{summary: "Invalid url", detail: "absolute http:// or https:// URL", line: 2}},
		},
		{
			name: "empty command",
			src: `server "s" {
  command = ""
}`,
			want: []wantDiag{{summary: "Empty value", detail: "command must not be empty", line: 2}},
		},
		{
			name: "headers",
			src: `server "s" {
  url              = "https://example.invalid/mcp"
  http_headers     = { "Bad Header" = "x", Authorization = "Bearer abc" }
  env_http_headers = { "X-Key" = "not a name" }
}`,
			want: []wantDiag{
				{warning: true, summary: "Credential written inline", line: 3},
				{summary: "Invalid HTTP header name", detail: `"Bad Header"`, line: 3},
				{summary: "Invalid environment variable name", detail: `header "X-Key"`, line: 4},
			},
		},
		{
			name: "serve",
			src: `serve {
  listen = "0.0.0.0"
}
`,
			want: []wantDiag{{summary: "Invalid listen address", line: 2}},
		},
		{
			name: "serve operations",
			src: `serve {
  drain_grace = "soon"
  metrics {
    listen = "9464"
  }
  tracing {
    otlp_endpoint = "collector:4318"
  }
}
`,
			want: []wantDiag{
				{summary: "Invalid duration", line: 2},
				{summary: "Invalid metrics listen address", line: 4},
				{summary: "Invalid OTLP endpoint", line: 7},
			},
		},
		{
			name: "serve initial list wait",
			src: `serve {
  initial_list_wait = "-1s"
}
`,
			want: []wantDiag{{summary: "Invalid timeout", line: 2}},
		},
		{
			name: "serve beyond loopback without a token",
			src: `serve {
  listen = "0.0.0.0:8931"
}
`,
			want: []wantDiag{{warning: true, summary: "Gateway listens beyond this machine", detail: "token_env_var", line: 2}},
		},
		{
			name: "empty tool block",
			src: `server "s" {
  command = "x"
  tool "t" {}
}`,
			want: []wantDiag{{warning: true, summary: "Empty tool block", line: 3}},
		},
		{
			name: "duplicate tool block",
			src: `server "s" {
  command = "x"
  tool "t" { approval_mode = "prompt" }
  tool "t" { approval_mode = "approve" }
}`,
			want: []wantDiag{{summary: `Duplicate tool "t"`, detail: "toolgate.hcl:3", line: 4}},
		},
		{
			name: "syntax error",
			src: `server "s" {
  command = "x
}`,
			want: []wantDiag{
				{summary: "Invalid multi-line string", line: 2},
				{summary: "Unterminated template string", line: 2},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, diags, _ := loadString(t, tc.src, tc.env)
			checkDiags(t, diags, tc.want)
		})
	}
}

func TestLoadDuplicateSingletonAcrossFiles(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{
		"a.hcl": `exposure {
  mode = "direct"
}
audit_log = "one.jsonl"
server "s" {
  command = "x"
}
`,
		"b.hcl": `# second file

exposure {
  mode = "deferred"
}
audit_log = "two.jsonl"
server "s" {
  command = "y"
}
`,
	})
	_, diags := Load(dir, LoadOptions{LookupEnv: fakeEnv(nil)})
	first := filepath.Join(dir, "a.hcl")
	checkDiags(t, diags, []wantDiag{
		{summary: "Duplicate exposure block", detail: "the first was defined at " + first + ":1", line: 3},
		{summary: "Duplicate audit log path (audit_log or audit { path })", detail: "the first was defined at " + first + ":4", line: 6},
		{summary: `Duplicate server "s"`, detail: "already defined at " + first + ":5", line: 7},
	})
	for _, d := range diags {
		if d.Subject.Filename != filepath.Join(dir, "b.hcl") {
			t.Errorf("%s points at %s, want the second file", d.Summary, d.Subject.Filename)
		}
	}
}

// No diagnostic, rendered or not, may contain the value of an environment
// variable or a file() result.
func TestDiagnosticsNeverPrintSecrets(t *testing.T) {
	t.Parallel()
	// A valid identifier, so that checks on variable names do not reject
	// it before it could leak.
	const secret = "S3cr3t_VALUE"
	dir := writeFiles(t, map[string]string{
		"token.txt": secret,
		"toolgate.hcl": `approval {
  policy = env("POLICY")
}
server "s" {
  url                  = env("URL")
  bearer_token_env_var = env("TOKEN_NAME")
  http_headers         = { "X-Token" = "${env("TOKEN")}\n" }
  protocol_version     = file("token.txt")
}
server "t" {
  command  = "x"
  env_vars = [env("TOKEN")]
  tool "x" { approval_mode = env("TOKEN") }
}
plugin "p" {
  kind    = env("TOKEN")
  path    = "p"
  sha256  = env("TOKEN")
  timeout = env("TOKEN")
}
`,
	})
	cfg, diags := Load(filepath.Join(dir, "toolgate.hcl"), LoadOptions{LookupEnv: fakeEnv(map[string]string{
		"POLICY":     secret,
		"URL":        "https://user:" + secret + "@example.invalid/",
		"TOKEN_NAME": secret,
		"TOKEN":      secret,
	})})
	if !diags.HasErrors() {
		t.Fatal("want errors")
	}
	if len(diags) < 8 {
		t.Errorf("got %d diagnostics, want one per bad field:%s", len(diags), describe(diags))
	}
	var buf bytes.Buffer
	if err := WriteDiagnostics(&buf, diags, cfg.Files, 0, false); err != nil {
		t.Fatal(err)
	}
	for _, d := range diags {
		if strings.Contains(d.Summary+d.Detail, secret) {
			t.Errorf("diagnostic leaks the secret: %s: %s", d.Summary, d.Detail)
		}
	}
	if strings.Contains(buf.String(), secret) {
		t.Errorf("rendered diagnostics leak the secret:\n%s", buf.String())
	}
}
