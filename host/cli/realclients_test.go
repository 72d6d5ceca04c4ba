package cli_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testbin"
)

// TestConnectRealClients connects the pinned Claude Code and Codex CLI
// (testplugins/interop) to toolgate and asks each client itself: `claude
// mcp list` starts the toolgate entry and reports it connected, `codex mcp
// list` lists it. No model is involved. The clients run with HOME (and
// CODEX_HOME) in a temporary directory, so nothing of the machine's own
// configuration is read or touched. --undo then restores both files byte
// for byte.
func TestConnectRealClients(t *testing.T) {
	interop := testbin.Interop(t)
	claude := claudeBinary(t, interop)
	node := testbin.Node(t)
	codexJS := filepath.Join(interop, "node_modules", "@openai", "codex", "bin", "codex.js")
	toolgate := testbin.Path(t, "toolgate")

	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	codexHome := filepath.Join(home, ".codex")
	cfg := filepath.Join(dir, "toolgate.hcl")
	demo := testbin.Path(t, "mcp-demo")
	writeFile(t, cfg, []byte("server \"demo\" {\n  command = \""+demo+"\"\n}\n"))
	claudeJSON := filepath.Join(home, ".claude.json")
	claudeOrig := []byte(`{
  "numStartups": 3,
  "hasCompletedOnboarding": true,
  "mcpServers": {
    "demo": {
      "type": "stdio",
      "command": "` + demo + `",
      "args": []
    }
  }
}
`)
	writeFile(t, claudeJSON, claudeOrig)
	codexTOML := filepath.Join(codexHome, "config.toml")
	codexOrig := []byte("# my Codex settings\nmodel = \"gpt-5-codex\"\n\n[mcp_servers.demo]\ncommand = \"" + demo + "\"\n")
	writeFile(t, codexTOML, codexOrig)

	env := []string{
		"HOME=" + home, "CODEX_HOME=" + codexHome, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8",
		// No network: neither client needs it to list its MCP servers.
		"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
	}
	runCmd := func(name string, args ...string) string {
		t.Helper()
		cmd := procwatch.DieWithTest(exec.CommandContext(t.Context(), name, args...))
		cmd.Env, cmd.Dir = env, dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	runCmd(toolgate, "--config", cfg, "connect", "claude-code", "--move")
	out := runCmd(claude, "mcp", "list")
	if !regexp.MustCompile(`(?m)^toolgate: .*toolgate serve --stdio --config .*Connected`).MatchString(out) {
		t.Fatalf("claude mcp list does not report toolgate connected:\n%s", out)
	}
	if regexp.MustCompile(`(?m)^demo:`).MatchString(out) {
		t.Fatalf("claude mcp list still has demo after connect --move:\n%s", out)
	}

	runCmd(toolgate, "--config", cfg, "connect", "codex", "--move")
	out = runCmd(node, codexJS, "mcp", "list")
	if !regexp.MustCompile(`(?m)^toolgate\s+` + regexp.QuoteMeta(toolgate) + `\s+serve --stdio --config`).MatchString(out) {
		t.Fatalf("codex mcp list does not list toolgate:\n%s", out)
	}
	if regexp.MustCompile(`(?m)^demo\s`).MatchString(out) {
		t.Fatalf("codex mcp list still has demo after connect --move:\n%s", out)
	}

	runCmd(toolgate, "connect", "claude-code", "--undo")
	runCmd(toolgate, "connect", "codex", "--undo")
	if b, _ := os.ReadFile(claudeJSON); !bytes.Equal(b, claudeOrig) {
		t.Errorf("connect --undo did not restore ~/.claude.json byte for byte:\n%s", b)
	}
	if b, _ := os.ReadFile(codexTOML); !bytes.Equal(b, codexOrig) {
		t.Errorf("connect --undo did not restore config.toml byte for byte:\n%s", b)
	}
}

// claudeBinary is Claude Code's native binary for this platform. npm ci
// runs with --ignore-scripts, so the package's bin/claude.exe is still
// its placeholder; the binary itself is in the platform package.
func claudeBinary(t *testing.T, interop string) string {
	t.Helper()
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	plat := map[string]string{"linux": "linux", "darwin": "darwin", "windows": "win32"}[runtime.GOOS]
	name := "claude"
	if runtime.GOOS == "windows" {
		name = "claude.exe"
	}
	p := filepath.Join(interop, "node_modules", "@anthropic-ai", "claude-code-"+plat+"-"+arch, name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("Claude Code's binary for %s/%s is not installed (%v); run make interop", runtime.GOOS, runtime.GOARCH, err)
	}
	return p
}
