package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/host/cli"
	"github.com/toolgate/toolgate/internal/contain"
	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/testplugins/mcpdemo"
)

// TestMain makes the test binary what toolgate's main is to the processes
// it starts in-process: a possible supervisor (contain.RunSupervisorIfAsked),
// without which a server's setsid descendant escapes its cell.
func TestMain(m *testing.M) {
	contain.RunSupervisorIfAsked()
	os.Exit(testbin.Main(m))
}

type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Run(t.Context(), args, cli.IO{
		In: strings.NewReader(""), Out: &out, Err: &errb,
		LookupEnv: func(k string) (string, bool) {
			if v, ok := env[k]; ok {
				return v, true
			}
			if k == "TOOLGATE_CONFIG" || k == "XDG_CONFIG_HOME" {
				return "", false // never pick up the developer's own config
			}
			return os.LookupEnv(k)
		},
	})
	return result{code, out.String(), errb.String()}
}

// exampleDir lays out the repository's config.hcl.example next to a
// bin/mcp-demo, exactly as a new user has it after `make build`.
func exampleDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(testbin.Root(), "config.hcl.example"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.hcl.example"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(testbin.Path(t, "mcp-demo"), filepath.Join(dir, "bin", "mcp-demo")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "bin", "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"plugins/toolgate-hook-policy", "plugins/toolgate-guardian"} {
		if err := os.Symlink(testbin.Path(t, p), filepath.Join(dir, "bin", p)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestExampleConfigAsANewUserTriesIt(t *testing.T) {
	cfg := filepath.Join(exampleDir(t), "config.hcl.example")

	r := run(t, nil, "validate", "--config", cfg)
	if r.code != cli.ExitOK || !strings.Contains(r.stdout, "valid (2 server(s), 2 enabled") {
		t.Fatalf("validate: %+v", r)
	}

	r = run(t, nil, "servers", "--config", cfg)
	if r.code != cli.ExitOK {
		t.Fatalf("servers: %+v", r)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^SERVER\s+STATUS\s+TRANSPORT\s+TOOLS\s+PROTOCOL`),
		regexp.MustCompile(`(?m)^demo\s+ready\s+stdio\s+20\s+2025-11-25\s+local`),
		regexp.MustCompile(`(?m)^files\s+ready\s+stdio\s+21\s+2025-11-25\s+local`),
	} {
		if !want.MatchString(r.stdout) {
			t.Errorf("servers output lacks %s:\n%s", want, r.stdout)
		}
	}

	r = run(t, nil, "tools", "--config", cfg)
	if r.code != cli.ExitOK {
		t.Fatalf("tools: %+v", r)
	}
	if !regexp.MustCompile(`(?m)^mcp__demo__echo\s+demo/echo\s+read-only\s+auto: runs without asking\s+direct$`).MatchString(r.stdout) {
		t.Errorf("tools output lacks the echo row:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "mcp__demo__delete_file") {
		t.Errorf("a disabled tool is listed:\n%s", r.stdout)
	}
	// The audit log named in the example was written next to it.
	audit, err := os.ReadFile(filepath.Join(filepath.Dir(cfg), "toolgate-audit.jsonl"))
	if err != nil || !strings.Contains(string(audit), `"event":"startup_complete"`) {
		t.Errorf("audit log: %v\n%s", err, audit)
	}
}

func TestJSONOutputs(t *testing.T) {
	cfg := filepath.Join(exampleDir(t), "config.hcl.example")
	r := run(t, nil, "servers", "--json", "--config", cfg)
	var servers struct {
		Servers []struct {
			Name, Status, Protocol string
			Tools                  int
		}
		Startup struct{ Ready []string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &servers); err != nil || r.code != 0 {
		t.Fatalf("servers --json: %v\n%+v", err, r)
	}
	if len(servers.Servers) != 2 || servers.Servers[0].Status != "ready" || !slices.Equal(servers.Startup.Ready, []string{"demo", "files"}) {
		t.Errorf("servers --json = %+v", servers)
	}

	r = run(t, nil, "tools", "--json", "--config", cfg)
	var tools struct {
		Tools []struct {
			ModelName  string `json:"model_name"`
			Server     string
			Tool       string
			Visibility string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &tools); err != nil {
		t.Fatalf("tools --json: %v\n%s", err, r.stdout)
	}
	if len(tools.Tools) != 41 {
		t.Errorf("tools --json lists %d tools, want 20 + 21", len(tools.Tools))
	}
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "toolgate.hcl")
	body = strings.ReplaceAll(body, "MCP_DEMO", testbin.Path(t, "mcp-demo"))
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExitCodes(t *testing.T) {
	for _, tt := range []struct {
		name   string
		config string
		code   int
		stderr string
	}{
		{"invalid config", `server "x" {
  comand = "mcp"
}`, cli.ExitUsage, `Did you mean "command"?`},
		{"optional server failed", `server "ok" { command = "MCP_DEMO" }
server "bad" {
  command = "MCP_DEMO"
  args    = ["--exit-immediately", "4"]
}`, cli.ExitDegraded, ""},
		{"required server failed", `server "ok" { command = "MCP_DEMO" }
server "bad" {
  command  = "MCP_DEMO"
  args     = ["--fail-initialize"]
  required = true
}`, cli.ExitFailure, "required MCP servers failed to initialize: bad: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, nil, "servers", "--config", writeConfig(t, tt.config))
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
				t.Fatalf("exit %d (want %d), stderr:\n%s\nstdout:\n%s", r.code, tt.code, r.stderr, r.stdout)
			}
		})
	}
	if r := run(t, nil, "bogus"); r.code != cli.ExitUsage {
		t.Errorf("unknown command: exit %d", r.code)
	}
	if r := run(t, nil, "version"); r.code != 0 || !strings.HasPrefix(r.stdout, "toolgate ") {
		t.Errorf("version: %+v", r)
	}
	// No configuration anywhere: say where we looked and how to start.
	t.Chdir(t.TempDir())
	r := run(t, map[string]string{"XDG_CONFIG_HOME": t.TempDir()}, "servers")
	if r.code != cli.ExitUsage || !strings.Contains(r.stderr, "config.hcl.example") {
		t.Errorf("no config: %+v", r)
	}
}

// The reference "everything" server adds tools after initialized and
// announces them; the host must list them, over stdio and HTTP.
func TestEverythingServer(t *testing.T) {
	argv := testbin.EverythingServer(t)
	quoted := func(ss []string) string {
		var q []string
		for _, s := range ss {
			q = append(q, fmt.Sprintf("%q", s))
		}
		return strings.Join(q, ", ")
	}
	// These appear only after notifications/initialized, because toolgate
	// advertises elicitation.
	late := []string{"mcp__everything__trigger_elicitation_request", "mcp__everything__trigger_url_elicitation"}

	check := func(t *testing.T, cfg string) {
		r := run(t, nil, "tools", "--json", "--config", cfg)
		if r.code != 0 {
			t.Fatalf("tools: %+v", r)
		}
		var out struct {
			Tools []struct {
				ModelName string `json:"model_name"`
			}
		}
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range out.Tools {
			names = append(names, tl.ModelName)
		}
		if len(names) < 14 {
			t.Errorf("listed %d tools: %v", len(names), names)
		}
		for _, want := range append([]string{"mcp__everything__echo", "mcp__everything__get_sum"}, late...) {
			if !slices.Contains(names, want) {
				t.Errorf("missing %s in %v", want, names)
			}
		}
	}

	t.Run("stdio", func(t *testing.T) {
		check(t, writeConfig(t, fmt.Sprintf(`server "everything" {
  command = %q
  args    = [%s]
}`, argv[0], quoted(append(argv[1:], "stdio")))))
	})

	// Deferred behind tool_search, the tools it adds after initialized are
	// searchable too.
	t.Run("deferred search", func(t *testing.T) {
		cfg := writeConfig(t, fmt.Sprintf(`exposure { mode = "deferred" }
server "everything" {
  command = %q
  args    = [%s]
}`, argv[0], quoted(append(argv[1:], "stdio"))))
		r := run(t, nil, "search", "--json", "--limit", "3", "--config", cfg, "ask the user a question with a form")
		var hits []struct {
			ModelName string `json:"model_name"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &hits); err != nil || r.code != 0 {
			t.Fatalf("search: %v %+v", err, r)
		}
		if len(hits) == 0 || hits[0].ModelName != "mcp__everything__trigger_elicitation_request" {
			t.Errorf("search hits = %+v", hits)
		}
		r = run(t, nil, "tools", "--config", cfg)
		if !regexp.MustCompile(`(?m)^mcp__everything__echo\s.*\sdeferred$`).MatchString(r.stdout) ||
			!regexp.MustCompile(`(?m)^tool_search\s.*\sbuiltin$`).MatchString(r.stdout) {
			t.Errorf("tools in deferred mode:\n%s", r.stdout)
		}
	})

	t.Run("http", func(t *testing.T) {
		port := freePort(t)
		cmd := exec.Command(argv[0], append(argv[1:], "streamableHttp")...)
		cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
		procwatch.OwnGroup(procwatch.DieWithTest(cmd))
		// It announces its port on stderr.
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = procwatch.KillGroup(cmd.Process.Pid)
			_ = cmd.Wait()
		})
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		if _, err := procwatch.WaitLine(ctx, stderr, regexp.MustCompile(`listening on port`)); err != nil {
			t.Fatal(err)
		}
		check(t, writeConfig(t, fmt.Sprintf(`server "everything" {
  url = "http://127.0.0.1:%d/mcp"
}`, port)))
	})
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestServerTextCannotDriveTheTerminal: a server whose tool name,
// description, result and stderr carry a screen clear, a title escape, a
// NUL and a bidi override (U+202E) gets all of them shown as visible
// escapes by servers, tools, search and call, in toolgate's log and in
// the audit log — never written raw.
func TestServerTextCannotDriveTheTerminal(t *testing.T) {
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg := writeConfig(t, `audit_log = "`+audit+`"
exposure { mode = "deferred" }
server "h" {
  command = "MCP_DEMO"
  args    = ["--no-default-tools", "--hostile-text"]
}
server "dead" {
  command = "MCP_DEMO"
  args    = ["--hostile-text", "--exit-immediately", "4"]
}`)
	raw := []string{"\x1b", "\x00", "\x07", "\u202e", "\u200b"}
	check := func(what, text string) {
		t.Helper()
		for _, r := range raw {
			if strings.Contains(text, r) {
				t.Errorf("%s shows %q raw:\n%q", what, r, text)
			}
		}
	}
	servers := run(t, nil, "servers", "--log-level", "info", "--config", cfg)
	check("servers", servers.stdout)
	// The log's own colours are toolgate's, not the server's.
	check("servers' log", regexp.MustCompile(`\x1b\[[0-9;]*m`).ReplaceAllString(servers.stderr, ""))
	if !strings.Contains(servers.stdout, `\x1b[2J`) || !strings.Contains(servers.stderr, `\u202etxt.exe`) {
		t.Errorf("servers should show the escapes visibly:\nstdout:\n%s\nstderr:\n%s", servers.stdout, servers.stderr)
	}

	tools := run(t, nil, "tools", "--config", cfg)
	check("tools", tools.stdout)
	if !strings.Contains(tools.stdout, `h/hostile\x1b[2J\u202eeman`) {
		t.Errorf("tools should show the raw name with visible escapes:\n%s", tools.stdout)
	}
	search := run(t, nil, "search", "hostile harmless", "--config", cfg)
	check("search", search.stdout)

	var listed struct {
		Tools []struct {
			ModelName string `json:"model_name"`
			Tool      string
		}
	}
	js := run(t, nil, "tools", "--json", "--config", cfg)
	check("tools --json", js.stdout)
	if err := json.Unmarshal([]byte(js.stdout), &listed); err != nil {
		t.Fatal(err)
	}
	name := ""
	for _, tl := range listed.Tools {
		if tl.Tool == mcpdemo.HostileToolName {
			name = tl.ModelName
		}
	}
	if name == "" {
		t.Fatalf("tools --json lacks the hostile tool:\n%s", js.stdout)
	}
	call := run(t, nil, "call", name, "--config", cfg)
	check("call", call.stdout)
	if call.code != 0 || !strings.Contains(call.stdout, `override \u202etxt.exe`) {
		t.Errorf("call: exit %d\n%s\n%s", call.code, call.stdout, call.stderr)
	}
	// --json keeps the value (a program decodes the same text) and shows
	// the override and the zero-width space as JSON escapes.
	callJSON := run(t, nil, "call", name, "--json", "--config", cfg)
	check("call --json", callJSON.stdout)
	var result struct {
		Content []struct{ Text string }
	}
	if err := json.Unmarshal([]byte(callJSON.stdout), &result); err != nil || len(result.Content) == 0 ||
		!strings.Contains(result.Content[0].Text, "override \u202etxt.exe, zero\u200bwidth") ||
		!strings.Contains(callJSON.stdout, `\u202etxt.exe, zero\u200bwidth`) {
		t.Errorf("call --json: %v\n%s", err, callJSON.stdout)
	}
	data, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	check("the audit log", string(data))
}

// TestSecretsAServerWasGivenDoNotComeBackOut: a server that echoes the
// credential it was configured with (an env value) in a result and in an
// error result has it replaced by [REDACTED] in what toolgate call
// prints and in the audit log; with redact_results = false the model
// sees the value, and the audit log still does not.
func TestSecretsAServerWasGivenDoNotComeBackOut(t *testing.T) {
	const secret = "sk-live-0123456789abcdef"
	for _, tc := range []struct {
		name       string
		block      string
		shownRaw   bool
		redactions int
	}{
		{"default", "", false, 1},
		{"redact_results = false", "redact_results = false", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			audit := filepath.Join(t.TempDir(), "audit.jsonl")
			cfg := writeConfig(t, `audit_log = "`+audit+`"
server "s" {
  command = "MCP_DEMO"
  env     = { API_TOKEN = "`+secret+`" }
  default_tools_approval_mode = "approve"
  `+tc.block+`
}`)
			for _, args := range [][]string{
				{"call", "mcp__s__env", `{"names":["API_TOKEN"]}`},
				{"call", "mcp__s__fail", `{"message":"bad token ` + secret + `"}`},
			} {
				r := run(t, nil, append(args, "--config", cfg)...)
				if got := strings.Contains(r.stdout, secret); got != tc.shownRaw {
					t.Errorf("%s: output shows the secret = %v, want %v:\n%s", args[1], got, tc.shownRaw, r.stdout)
				}
				if !tc.shownRaw && !strings.Contains(r.stdout, "[REDACTED]") {
					t.Errorf("%s: output lacks [REDACTED]:\n%s", args[1], r.stdout)
				}
				if strings.Contains(r.stderr, secret) {
					t.Errorf("%s: the log shows the secret:\n%s", args[1], r.stderr)
				}
			}
			data, err := os.ReadFile(audit)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(data), secret) {
				t.Errorf("the audit log records the secret:\n%s", data)
			}
			if !strings.Contains(string(data), "[REDACTED]") {
				t.Errorf("the audit log should show where the secret was:\n%s", data)
			}
		})
	}
}

// TestToolsShowsApprovalsWhoseToolChanged: a remembered approval bound to
// a definition the server no longer has is flagged, in the table and in
// --json.
func TestToolsShowsApprovalsWhoseToolChanged(t *testing.T) {
	cfg := writeConfig(t, `
server "demo" {
  command = "MCP_DEMO"
  tool "slow_write" {
    approval_mode       = "remembered"
    approved_definition = "sha256:`+strings.Repeat("0", 64)+`"
  }
  tool "write_file" { approval_mode = "remembered" }
}
`)
	r := run(t, nil, "tools", "--config", cfg)
	if !regexp.MustCompile(`(?m)^mcp__demo__slow_write\s.*remembered: asks again: the tool changed since it was approved`).MatchString(r.stdout) {
		t.Errorf("tools output does not flag slow_write:\n%s", r.stdout)
	}
	if regexp.MustCompile(`(?m)^mcp__demo__write_file\s.*changed`).MatchString(r.stdout) {
		t.Errorf("an unbound approval is flagged:\n%s", r.stdout)
	}
	r = run(t, nil, "tools", "--json", "--config", cfg)
	var tools struct {
		Tools []struct {
			Tool              string
			DefinitionChanged bool `json:"definition_changed"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &tools); err != nil {
		t.Fatalf("tools --json: %v\n%s", err, r.stdout)
	}
	for _, tl := range tools.Tools {
		if tl.DefinitionChanged != (tl.Tool == "slow_write") {
			t.Errorf("%s: definition_changed = %v", tl.Tool, tl.DefinitionChanged)
		}
	}
}

// TestSecretFormatsAServerPrintsAreRedacted: a server that prints fake
// credentials of every well-known format (mcp-demo --leak-secrets) to
// stderr and in a result gets none of them into the audit log or
// toolgate's log (info and debug); the model gets the result as written,
// unless the block sets redact_secret_formats = true.
func TestSecretFormatsAServerPrintsAreRedacted(t *testing.T) {
	canaries := mcpdemo.SecretCanaries()
	for _, tc := range []struct {
		block    string
		shownRaw bool
	}{
		{"", true},
		{"redact_secret_formats = true", false},
	} {
		t.Run(fmt.Sprintf("shown=%v", tc.shownRaw), func(t *testing.T) {
			audit := filepath.Join(t.TempDir(), "audit.jsonl")
			cfg := writeConfig(t, `audit_log = "`+audit+`"
server "s" {
  command = "MCP_DEMO"
  args    = ["--no-default-tools", "--leak-secrets"]
  default_tools_approval_mode = "approve"
  `+tc.block+`
}`)
			r := run(t, nil, "call", "mcp__s__leak_secrets", "--log-level", "debug", "--config", cfg)
			if r.code != 0 {
				t.Fatalf("call: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			data, err := os.ReadFile(audit)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(r.stderr, "mcp-demo: leaking") {
				t.Fatalf("the server's stderr was not logged:\n%s", r.stderr)
			}
			for _, c := range canaries {
				// The PEM body line stands for the block; the log has it
				// on one line.
				probe := c
				if i := strings.Index(c, "MIIE"); i >= 0 {
					probe = c[i : i+24]
				}
				if strings.Contains(string(data), probe) {
					t.Errorf("the audit log records %q", probe)
				}
				if strings.Contains(r.stderr, probe) {
					t.Errorf("the log shows %q", probe)
				}
				if got := strings.Contains(r.stdout, probe); got != tc.shownRaw {
					t.Errorf("the result shows %q = %v, want %v:\n%s", probe, got, tc.shownRaw, r.stdout)
				}
			}
			if !strings.Contains(string(data), "[REDACTED]") {
				t.Errorf("the audit log should show where the secrets were:\n%s", data)
			}
		})
	}
}
