package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/host/cli"
	"github.com/toolgate/toolgate/internal/testbin"
)

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testbin.Root(), "host", "clients", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestImportWriteThenValidate imports every client fixture into one
// config that already has a server and comments: the dry run writes
// nothing, --write appends, the comments survive, and the result
// validates.
func TestImportWriteThenValidate(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "toolgate.hcl")
	orig := "# my servers\nserver \"demo\" {\n  command = \"" + testbin.Path(t, "mcp-demo") + "\" # the demo\n}\n"
	writeFile(t, cfg, []byte(orig))
	env := map[string]string{"HOME": dir}
	for _, fx := range []struct{ client, file string }{
		{"claude-desktop", "claude_desktop_config.json"},
		{"claude-code", "mcp.json.claude-project"},
		{"codex", "codex-config.toml"},
		{"cursor", "cursor-mcp.json"},
		{"vscode", "vscode/mcp.json"},
		{"gemini", "gemini-settings.json"},
	} {
		from := filepath.Join(dir, strings.ReplaceAll(fx.file, "/", "_"))
		writeFile(t, from, fixture(t, fx.file))
		r := run(t, env, "--config", cfg, "import", fx.client, "--from", from)
		if r.code != cli.ExitOK || !strings.Contains(r.stdout, "server ") || !strings.Contains(r.stderr, "dry run") {
			t.Fatalf("import %s (dry run): exit %d\n%s\n%s", fx.client, r.code, r.stdout, r.stderr)
		}
		if b, _ := os.ReadFile(cfg); !bytes.HasPrefix(b, []byte(orig)) {
			t.Fatalf("the dry run or an earlier import changed the existing text:\n%s", b)
		}
		r = run(t, env, "--config", cfg, "import", fx.client, "--from", from, "--write")
		if r.code != cli.ExitOK || !strings.Contains(r.stderr, "imported ") {
			t.Fatalf("import %s --write: exit %d\n%s", fx.client, r.code, r.stderr)
		}
	}
	b, _ := os.ReadFile(cfg)
	for _, want := range []string{`server "github"`, `server "docs"`, `server "browser"`, `server "perplexity"`, `server "pythonTools"`, `server "weather"`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("the config lacks %s:\n%s", want, b)
		}
	}
	for _, secret := range []string{"ghp_16C7e42F292c6912E7710c838347Ae178B4a", "sk-live-4f9a8b7c6d5e4f3a2b1c", "sk_test_51Hc0n7K2eZvKYlo2C4z8aB3", "abc123def456ghi789jkl012"} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("a secret reached the config: %s", secret)
		}
	}
	// The imported servers whose bearer token variable is unset here are
	// written disabled, so the config loads as it is.
	if r := run(t, env, "--config", cfg, "validate"); r.code != cli.ExitOK {
		t.Fatalf("validate after import: exit %d\n%s", r.code, r.stderr)
	}
	// Importing again duplicates nothing.
	from := filepath.Join(dir, "codex-config.toml")
	r := run(t, env, "--config", cfg, "import", "codex", "--from", from, "--write")
	if r.code != cli.ExitOK || !strings.Contains(r.stderr, "already has a server \"docs\"") {
		t.Fatalf("second import: exit %d\n%s", r.code, r.stderr)
	}
}

// TestMCPAddServersRemove adds a server with toolgate mcp add, sees it
// ready in toolgate servers, and removes it; the remove names the hook
// whose match used the server. Comments survive every edit.
func TestMCPAddServersRemove(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "toolgate.hcl")
	orig := `# hooks first
plugin "policy" {
  kind = "hook"
  path = "` + testbin.Path(t, "plugins/toolgate-hook-policy") + `"
  match { server = "files" } # only the files server
  config {
    default = "allow"
  }
}
`
	writeFile(t, cfg, []byte(orig))
	r := run(t, nil, "--config", cfg, "mcp", "add", "files", "--env", "DEMO_MODE=files", "--env", "API_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
		"--", testbin.Path(t, "mcp-demo"), "--name", "files")
	if r.code != cli.ExitOK {
		t.Fatalf("mcp add: exit %d\n%s", r.code, r.stderr)
	}
	b, _ := os.ReadFile(cfg)
	if !bytes.HasPrefix(b, []byte(orig)) || bytes.Contains(b, []byte("ghp_")) || !strings.Contains(r.stderr, "API_TOKEN") {
		t.Fatalf("after mcp add:\n%s\n%s", b, r.stderr)
	}
	r = run(t, nil, "--config", cfg, "servers")
	if r.code != cli.ExitOK || !regexpMatch(`(?m)^files\s+ready\s`, r.stdout) {
		t.Fatalf("servers after mcp add: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, nil, "--config", cfg, "mcp", "list")
	if r.code != cli.ExitOK || !strings.Contains(r.stdout, "files") {
		t.Fatalf("mcp list: exit %d\n%s", r.code, r.stdout)
	}
	r = run(t, nil, "--config", cfg, "mcp", "get", "files")
	if r.code != cli.ExitOK || !strings.Contains(r.stdout, `server "files" {`) || !strings.Contains(r.stdout, `env_vars = ["API_TOKEN"]`) {
		t.Fatalf("mcp get: exit %d\n%s", r.code, r.stdout)
	}
	// An invalid server is refused and nothing is written.
	before, _ := os.ReadFile(cfg)
	r = run(t, nil, "--config", cfg, "mcp", "add", "web", "--url", "ftp://example.com/mcp")
	if r.code == cli.ExitOK || !strings.Contains(r.stderr, "nothing was written") {
		t.Fatalf("mcp add of an invalid server: exit %d\n%s", r.code, r.stderr)
	}
	if after, _ := os.ReadFile(cfg); !bytes.Equal(before, after) {
		t.Fatalf("a refused add changed the file:\n%s", after)
	}
	r = run(t, nil, "--config", cfg, "mcp", "add", "files", "--", "x")
	if r.code != cli.ExitUsage || !strings.Contains(r.stderr, "already has a server \"files\"") {
		t.Fatalf("duplicate add: exit %d\n%s", r.code, r.stderr)
	}

	r = run(t, nil, "--config", cfg, "mcp", "remove", "files")
	if r.code != cli.ExitOK || !strings.Contains(r.stderr, `hook(s) policy names server "files"`) {
		t.Fatalf("mcp remove: exit %d\n%s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(cfg); string(b) != orig {
		t.Fatalf("add then remove did not give the file back:\n%s\nwant\n%s", b, orig)
	}
}

func TestMCPAddReadOnlyConfig(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("file modes")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "toolgate.hcl")
	writeFile(t, cfg, []byte("# read-only\n"))
	if err := os.Chmod(cfg, 0o444); err != nil {
		t.Fatal(err)
	}
	r := run(t, nil, "--config", cfg, "mcp", "add", "files", "--", "mcp-demo")
	if r.code == cli.ExitOK || !strings.Contains(r.stderr, "read-only") || !strings.Contains(r.stderr, "make it writable") {
		t.Fatalf("mcp add to a read-only config: exit %d\n%s", r.code, r.stderr)
	}
}

// TestConnectUndo connects Codex and Claude Code (a file that exists and
// one that does not), checks the dry run writes nothing, and that --undo
// gives back the files byte for byte.
func TestConnectUndo(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	cfg := filepath.Join(dir, "toolgate.hcl")
	writeFile(t, cfg, []byte(`server "context7" {
  command = "`+testbin.Path(t, "mcp-demo")+`"
}
`))
	codexFile := filepath.Join(home, ".codex", "config.toml")
	orig := fixture(t, "codex-config.toml")
	writeFile(t, codexFile, orig)
	env := map[string]string{"HOME": home, "CODEX_HOME": filepath.Join(home, ".codex")}

	r := run(t, env, "--config", cfg, "connect", "codex", "--from", codexFile, "--dry-run", "--move")
	if r.code != cli.ExitOK || !strings.Contains(r.stdout, "+[mcp_servers.toolgate]") || !strings.Contains(r.stdout, "-[mcp_servers.context7]") {
		t.Fatalf("dry run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(codexFile); !bytes.Equal(b, orig) {
		t.Fatal("the dry run changed the file")
	}
	r = run(t, env, "--config", cfg, "connect", "codex", "--from", codexFile, "--move")
	if r.code != cli.ExitOK || !strings.Contains(r.stderr, "moved behind toolgate (removed from the client): context7") ||
		!strings.Contains(r.stderr, "still reached directly, around the approval chain: docs, figma") {
		t.Fatalf("connect: exit %d\n%s", r.code, r.stderr)
	}
	b, _ := os.ReadFile(codexFile)
	if bytes.Equal(b, orig) || bytes.Contains(b, []byte("[mcp_servers.context7]")) || !bytes.Contains(b, []byte("startup_timeout_sec = 60")) {
		t.Fatalf("after connect:\n%s", b)
	}
	// A second connect keeps the first backup, so undo still goes back
	// to the file as it was before toolgate.
	if r := run(t, env, "--config", cfg, "connect", "codex", "--from", codexFile); r.code != cli.ExitOK {
		t.Fatalf("second connect: exit %d\n%s", r.code, r.stderr)
	}
	if r := run(t, env, "connect", "codex", "--from", codexFile, "--undo"); r.code != cli.ExitOK {
		t.Fatalf("undo: exit %d\n%s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(codexFile); !bytes.Equal(b, orig) {
		t.Fatalf("undo did not restore the file byte for byte:\n%s", b)
	}
	if r := run(t, env, "connect", "codex", "--from", codexFile, "--undo"); r.code == cli.ExitOK || !strings.Contains(r.stderr, "nothing to undo") {
		t.Fatalf("second undo: exit %d\n%s", r.code, r.stderr)
	}

	// A client file that did not exist: undo removes it again.
	mcpJSON := filepath.Join(dir, "project", ".mcp.json")
	if r := run(t, env, "--config", cfg, "connect", "claude-code", "--from", mcpJSON); r.code != cli.ExitOK {
		t.Fatalf("connect a new file: exit %d\n%s", r.code, r.stderr)
	}
	if b, err := os.ReadFile(mcpJSON); err != nil || !bytes.Contains(b, []byte(`"toolgate"`)) {
		t.Fatalf("new file: %v\n%s", err, b)
	}
	if r := run(t, env, "connect", "claude-code", "--from", mcpJSON, "--undo"); r.code != cli.ExitOK {
		t.Fatalf("undo a new file: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(mcpJSON); !os.IsNotExist(err) {
		t.Fatalf("undo left %s: %v", mcpJSON, err)
	}
}

func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }

// TestConnectDryRunRedacts: the diff of connect --dry-run shows the
// lines it removes, but not the credentials in them.
func TestConnectDryRunRedacts(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "toolgate.hcl")
	writeFile(t, cfg, []byte("server \"postgres\" {\n  command = \""+testbin.Path(t, "mcp-demo")+"\"\n}\n"))
	from := filepath.Join(dir, "claude.json")
	writeFile(t, from, fixture(t, "claude.json"))
	r := run(t, map[string]string{"HOME": dir}, "--config", cfg, "connect", "claude-code", "--from", from, "--move", "--dry-run")
	if r.code != cli.ExitOK || !strings.Contains(r.stdout, `-    "postgres": {`) || !strings.Contains(r.stdout, `"PGPASSWORD": "<redacted>"`) {
		t.Fatalf("dry run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, "hunter2secret") {
		t.Fatalf("the dry run printed a secret:\n%s", r.stdout)
	}
}
