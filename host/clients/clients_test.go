package clients

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolgate/toolgate/host/config"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// fixtures are the client files written from each client's documentation.
var fixtures = []struct {
	client, file string
	env          Env
}{
	{"claude-desktop", "claude_desktop_config.json", Env{GOOS: "windows"}},
	{"claude-code", "claude.json", Env{Cwd: "/home/ada/work/shop"}},
	{"claude-code", "mcp.json.claude-project", Env{}},
	{"codex", "codex-config.toml", Env{GOOS: "windows"}},
	{"cursor", "cursor-mcp.json", Env{Cwd: "/home/ada/shop"}},
	{"vscode", "vscode/mcp.json", Env{Cwd: "/home/ada/shop", Home: "/home/ada"}},
	{"gemini", "gemini-settings.json", Env{}},
}

// secrets are the literal credentials in the fixtures: none may reach
// the HCL or a note.
var secrets = []string{
	"ghp_16C7e42F292c6912E7710c838347Ae178B4a", "hunter2secret", "sk-live-4f9a8b7c6d5e4f3a2b1c",
	"sk_test_51Hc0n7K2eZvKYlo2C4z8aB3", "abc123def456ghi789jkl012",
}

func parseFixture(t *testing.T, client, file string, env Env) *File {
	t.Helper()
	c, err := Lookup(client)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(c, file, src, env)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return f
}

// TestImportFixtures imports each fixture, compares the HCL and the
// summary with the golden file, checks no secret is copied, and loads
// the result with toolgate's own config loader.
func TestImportFixtures(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(strings.ReplaceAll(fx.file, "/", "_"), func(t *testing.T) {
			f := parseFixture(t, fx.client, fx.file, fx.env)
			res, err := Import(f, ImportOptions{Env: fx.env})
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			got.Write(res.HCL)
			got.WriteString("\n# --- notes\n")
			for _, n := range res.Notes {
				got.WriteString("# " + n.Server + " [" + string(n.Kind) + "] " + n.Text + "\n")
			}
			got.WriteString("# --- set: " + strings.Join(res.SetEnv, " ") + "\n")
			for _, s := range secrets {
				if strings.Contains(got.String(), s) {
					t.Errorf("the secret %q was copied into the import:\n%s", s, got.String())
				}
			}
			golden := filepath.Join("testdata", strings.ReplaceAll(fx.file, "/", "_")+".golden")
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update once)", err)
			}
			if d := cmp.Diff(string(want), got.String()); d != "" {
				t.Errorf("import differs from %s (-want +got):\n%s", golden, d)
			}
			validate(t, res.HCL, res.SetEnv)
		})
	}
}

// validate loads hclText as a toolgate config, with the variables the
// import asks for set.
func validate(t *testing.T, hclText []byte, setEnv []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "toolgate.hcl")
	if err := os.WriteFile(path, hclText, 0o600); err != nil {
		t.Fatal(err)
	}
	lookup := func(name string) (string, bool) {
		for _, v := range setEnv {
			if v == name {
				return "value-of-" + name, true
			}
		}
		return "", false
	}
	if _, diags := config.Load(path, config.LoadOptions{LookupEnv: lookup}); diags.HasErrors() {
		t.Fatalf("the imported HCL does not validate: %s\n%s", diags.Error(), hclText)
	}
}

func TestJSONCStringsAndComments(t *testing.T) {
	src := []byte("\xef\xbb\xbf{\n  // a comment with \"quotes\"\n  \"url\": \"https://x.example/a//b\", /* block */\n  \"s\": \"/* not a comment */\",\n  \"list\": [1, 2,],\n}\n")
	v, err := parseJSONC("x.json", src)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"url": "https://x.example/a//b", "s": "/* not a comment */", "list": []any{json.Number("1"), json.Number("2")}}
	if d := cmp.Diff(want, v.any()); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	for _, bad := range []struct{ src, want string }{
		{`{"a": 1 "b": 2}`, "x.json:1:9: expected , or } after the value of \"a\""},
		{"{\n  \"a\": /* open", "x.json:2:8: unterminated /* comment"},
		{`{"a": "unterminated`, "x.json:1:7: unterminated string"},
	} {
		_, err := parseJSONC("x.json", []byte(bad.src))
		if err == nil || err.Error() != bad.want {
			t.Errorf("parseJSONC(%q) = %v, want %s", bad.src, err, bad.want)
		}
	}
}

func TestDefaultPaths(t *testing.T) {
	linux := Env{GOOS: "linux", Home: "/home/ada", Cwd: "/home/ada/p"}
	mac := Env{GOOS: "darwin", Home: "/Users/ada", Cwd: "/Users/ada/p"}
	win := Env{GOOS: "windows", Home: `C:\Users\ada`, AppData: `C:\Users\ada\AppData\Roaming`, Cwd: `C:\src\p`}
	tests := []struct {
		client string
		scope  Scope
		env    Env
		want   string
	}{
		{"claude-desktop", "", mac, "/Users/ada/Library/Application Support/Claude/claude_desktop_config.json"},
		{"claude-desktop", "", win, `C:\Users\ada\AppData\Roaming\Claude\claude_desktop_config.json`},
		{"claude-desktop", "", linux, "/home/ada/.config/Claude/claude_desktop_config.json"},
		{"claude-code", "", win, `C:\Users\ada\.claude.json`},
		{"claude-code", ScopeProject, linux, "/home/ada/p/.mcp.json"},
		{"codex", "", linux, "/home/ada/.codex/config.toml"},
		{"codex", "", Env{GOOS: "linux", Home: "/home/ada", CodexHome: "/srv/codex"}, "/srv/codex/config.toml"},
		{"codex", "", win, `C:\Users\ada\.codex\config.toml`},
		{"cursor", "", mac, "/Users/ada/.cursor/mcp.json"},
		{"cursor", ScopeProject, win, `C:\src\p\.cursor\mcp.json`},
		{"vscode", "", win, `C:\src\p\.vscode\mcp.json`},
		{"vscode", ScopeUser, mac, "/Users/ada/Library/Application Support/Code/User/mcp.json"},
		{"vscode", ScopeUser, win, `C:\Users\ada\AppData\Roaming\Code\User\mcp.json`},
		{"gemini", "", linux, "/home/ada/.gemini/settings.json"},
		{"gemini", ScopeProject, linux, "/home/ada/p/.gemini/settings.json"},
	}
	for _, tt := range tests {
		c, _ := Lookup(tt.client)
		got, err := c.Path(tt.scope, tt.env)
		if err != nil || got != tt.want {
			t.Errorf("%s %s on %s: %q, %v; want %q", tt.client, tt.scope, tt.env.GOOS, got, err, tt.want)
		}
	}
	c, _ := Lookup("codex")
	if _, err := c.Path(ScopeProject, linux); err == nil || !strings.Contains(err.Error(), "--scope user") {
		t.Errorf("codex project scope: %v, want an error naming --scope user", err)
	}
	if _, err := Lookup("zed"); err == nil || !strings.Contains(err.Error(), "claude-code") {
		t.Errorf("Lookup(zed) = %v, want an error listing the clients", err)
	}
}

// TestConnectRoundTrip connects each fixture to toolgate, moving every
// server, and reads the result back: the toolgate entry is the only
// server left (import shows nothing else), everything else in the file
// survives, and a second connect changes nothing.
func TestConnectRoundTrip(t *testing.T) {
	target := Target{Command: `C:\Program Files\toolgate\toolgate.exe`, Args: []string{"serve", "--stdio", "--config", `C:\Users\ada\toolgate.hcl`}, StartupTimeoutSec: 40}
	keep := map[string][]string{
		"claude_desktop_config.json": {`"globalShortcut": "Ctrl+Space"`},
		"claude.json":                {`"numStartups": 12`, `"hasTrustDialogAccepted": true`, `"userID": "0c9a2f"`},
		"mcp.json.claude-project":    nil,
		"codex-config.toml":          {"# Codex CLI configuration", `model = "gpt-5-mini" # a comment after a value`, "# Everything below is about the shell.\n[shell_environment_policy]\ninherit = \"core\""},
		"cursor-mcp.json":            {"// Cursor reads this file as JSON with comments."},
		"vscode/mcp.json":            {"/* Inputs are asked once and stored by VS Code. */", `"id": "perplexity-key"`},
		"gemini-settings.json":       {`"theme": "GitHub"`, "// Gemini CLI allows comments in settings.json.", `"selectedAuthType": "oauth-personal"`},
	}
	for _, fx := range fixtures {
		t.Run(strings.ReplaceAll(fx.file, "/", "_"), func(t *testing.T) {
			f := parseFixture(t, fx.client, fx.file, fx.env)
			var all []string
			for _, s := range f.Servers {
				all = append(all, s.Name)
			}
			res, err := Connect(f, target, all)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Direct) != 0 || len(res.Moved) != len(all) {
				t.Errorf("moved %v, direct %v; want all of %v moved", res.Moved, res.Direct, all)
			}
			golden := filepath.Join("testdata", strings.ReplaceAll(fx.file, "/", "_")+".connected")
			if *update {
				if err := os.WriteFile(golden, res.Out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update once)", err)
			}
			if d := cmp.Diff(string(want), string(res.Out)); d != "" {
				t.Errorf("connected file differs from %s (-want +got):\n%s", golden, d)
			}
			for _, k := range keep[fx.file] {
				if !strings.Contains(string(res.Out), k) {
					t.Errorf("the edit lost %q:\n%s", k, res.Out)
				}
			}
			if strings.HasPrefix(fx.client, "claude") && !json.Valid(res.Out) {
				t.Errorf("a strict-JSON client's file is no longer strict JSON:\n%s", res.Out)
			}
			again, err := Parse(f.Client, fx.file, res.Out, fx.env)
			if err != nil {
				t.Fatalf("the connected file does not parse: %v\n%s", err, res.Out)
			}
			if len(again.Servers) != 1 || again.Servers[0].Name != EntryName {
				t.Fatalf("servers after connect --move: %+v, want only %q", again.Servers, EntryName)
			}
			got := again.Servers[0]
			if got.Command != target.Command || !cmp.Equal(got.Args, target.Args) {
				t.Errorf("toolgate entry: %q %q, want %q %q", got.Command, got.Args, target.Command, target.Args)
			}
			if fx.client == "codex" && got.StartupTimeoutSec != 40 {
				t.Errorf("codex startup_timeout_sec = %v, want 40", got.StartupTimeoutSec)
			}
			if imp, err := Import(again, ImportOptions{}); err != nil || len(imp.Imported) != 0 || len(imp.Notes) != 1 || imp.Notes[0].Kind != NoteSkipped {
				t.Errorf("importing the connected file = %+v, %v; want only the toolgate entry, skipped", imp, err)
			}
			twice, err := Connect(again, target, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(twice.Out, res.Out) {
				t.Errorf("a second connect changed the file:\n%s", cmp.Diff(string(res.Out), string(twice.Out)))
			}
		})
	}
}

// TestConnectKeepsOthers connects without --move: every server stays
// and is reported as reaching the client directly.
func TestConnectKeepsOthers(t *testing.T) {
	f := parseFixture(t, "claude-code", "mcp.json.claude-project", Env{})
	res, err := Connect(f, Target{URL: "http://127.0.0.1:8931/mcp", TokenEnvVar: "TOOLGATE_TOKEN"}, []string{"weather"})
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(res.Direct, []string{"api-server"}) || !cmp.Equal(res.Moved, []string{"weather"}) {
		t.Errorf("direct %v moved %v", res.Direct, res.Moved)
	}
	if !json.Valid(res.Out) {
		t.Fatalf("not valid JSON:\n%s", res.Out)
	}
	again, err := Parse(f.Client, "x", res.Out, Env{})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := again.server(EntryName)
	if err != nil {
		t.Fatal(err)
	}
	if tg.URL != "http://127.0.0.1:8931/mcp" || !cmp.Equal(tg.Headers, []KV{{"Authorization", "Bearer ${TOOLGATE_TOKEN}"}}) {
		t.Errorf("toolgate entry %+v", tg)
	}
	c, _ := Lookup("claude-desktop")
	empty, _ := Parse(c, "x", nil, Env{})
	if _, err := Connect(empty, Target{URL: "http://x/mcp"}, nil); !errors.Is(err, ErrNotConnectable) {
		t.Errorf("Claude Desktop over HTTP: %v, want ErrNotConnectable", err)
	}
}

// TestConnectTOMLInline refuses to move a Codex server written as dotted
// keys, which cannot be cut out line by line, and says how to fix it.
func TestConnectTOMLInline(t *testing.T) {
	c, _ := Lookup("codex")
	src := "[mcp_servers]\nweb = { command = \"web-mcp\" }\n"
	f, err := Parse(c, "config.toml", []byte(src), Env{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Connect(f, Target{Command: "/bin/toolgate", Args: []string{"serve"}}, []string{"web"})
	if err == nil || !strings.Contains(err.Error(), "[mcp_servers.web]") {
		t.Fatalf("Connect = %v, want an error naming the table form", err)
	}
	res, err := Connect(f, Target{Command: "/bin/toolgate", Args: []string{"serve"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := src + "\n[mcp_servers.toolgate]\ncommand = \"/bin/toolgate\"\nargs = [\"serve\"]\n"
	if string(res.Out) != want {
		t.Errorf("got\n%s\nwant\n%s", res.Out, want)
	}
}

func TestRedactLine(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`      "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_16C7e42F292c6912E7710c838347Ae178B4a"`, `      "GITHUB_PERSONAL_ACCESS_TOKEN": "<redacted>"`},
		{`DOCS_API_TOKEN = "sk-live-4f9a8b7c6d5e4f3a2b1c"`, `DOCS_API_TOKEN = "<redacted>"`},
		{`      "args": ["--dsn", "postgres://app:hunter2secret@db.internal/app"],`, `      "args": ["--dsn", "<redacted>"],`},
		{`        "Authorization": "Bearer abc123"`, `        "Authorization": "<redacted>"`},
		{`        "Authorization": "Bearer ${SENTRY_TOKEN}"`, `        "Authorization": "Bearer ${SENTRY_TOKEN}"`},
		{`      "command": "npx", "args": ["-y", "server"]`, `      "command": "npx", "args": ["-y", "server"]`},
		{`        "LOG_LEVEL": "info"`, `        "LOG_LEVEL": "info"`},
	} {
		if got := RedactLine(tt.in); got != tt.want {
			t.Errorf("RedactLine(%s)\n = %s\nwant %s", tt.in, got, tt.want)
		}
	}
}
