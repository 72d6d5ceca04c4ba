package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const projectionBase = `plugin "policy" {
  kind = "hook"
  path = "bin/policy"
  config {
    rules = ["deny *"]
  }
}

plugin "exec" {
  kind = "launcher"
  path = "bin/exec"
}

environment "box" {
  launcher = "exec"
  config {
    host = "build-1"
  }
}

server "files" {
  command = "bin/mcp-demo"
  tool "write_file" { approval_mode = "prompt" }
}

server "remote" {
  url = "https://example.invalid/mcp"
}
`

// The same blocks, reordered, re-indented in places and pushed down by
// comments: every projection must still compare equal.
const projectionMoved = `# moved around

server "remote" {
  url = "https://example.invalid/mcp"
}

server "files" {
  tool "write_file" {
    approval_mode = "prompt"
  }
  command = "bin/mcp-demo"
  args    = []
}

environment "box" {
  config {
    host = "build-1"
  }
  launcher = "exec"
}

plugin "exec" {
  path = "bin/exec"
  kind = "launcher"
}

plugin "policy" {
  config {
    rules = ["deny *"]
  }
  kind = "hook"
  path = "bin/policy"
}
`

func loadIn(t *testing.T, dir, src string) *Config {
	t.Helper()
	p := filepath.Join(dir, "toolgate.hcl")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := Load(p, LoadOptions{LookupEnv: fakeEnv(nil)})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return cfg
}

func TestSameProjection(t *testing.T) {
	t.Parallel()
	dirA, dirB := t.TempDir(), t.TempDir()
	base := loadIn(t, dirA, projectionBase)

	t.Run("moved blocks are the same", func(t *testing.T) {
		t.Parallel()
		// Same directory, so relative paths resolve to the same files.
		moved := loadIn(t, dirA, projectionMoved)
		for _, s := range base.Servers {
			o, _ := moved.Server(s.Name)
			if !s.SameProjection(o) {
				t.Errorf("server %s: moved block compares different", s.Name)
			}
		}
		for _, p := range base.Plugins {
			o, _ := moved.Plugin(p.Name)
			if !p.SameProjection(o) {
				t.Errorf("plugin %s: moved block compares different", p.Name)
			}
		}
		e, _ := base.Environment("box")
		o, _ := moved.Environment("box")
		if !e.SameProjection(o) {
			t.Error("environment box: moved block compares different")
		}
	})

	t.Run("same text in another directory differs", func(t *testing.T) {
		t.Parallel()
		other := loadIn(t, dirB, projectionBase)
		s, _ := base.Server("files")
		o, _ := other.Server("files")
		if s.SameProjection(o) {
			t.Error("bin/mcp-demo resolves to another file, yet the servers compare equal")
		}
		r, _ := base.Server("remote")
		ro, _ := other.Server("remote")
		if !r.SameProjection(ro) {
			t.Error("an HTTP server with no paths should not depend on the directory")
		}
	})

	changes := []struct {
		name, old, new string
		kind           string // server, plugin or environment
		block          string
	}{
		{"tool approval mode", `approval_mode = "prompt"`, `approval_mode = "approve"`, "server", "files"},
		{"args", `command = "bin/mcp-demo"`, "command = \"bin/mcp-demo\"\n  args = [\"-v\"]", "server", "files"},
		{"enabled_tools empty vs unset", `command = "bin/mcp-demo"`, "command = \"bin/mcp-demo\"\n  enabled_tools = []", "server", "files"},
		{"url", `url = "https://example.invalid/mcp"`, `url = "https://example.invalid/mcp2"`, "server", "remote"},
		{"plugin config body", `rules = ["deny *"]`, `rules = ["deny x"]`, "plugin", "policy"},
		{"plugin path", `path = "bin/policy"`, `path = "bin/policy2"`, "plugin", "policy"},
		{"environment config body", `host = "build-1"`, `host = "build-2"`, "environment", "box"},
	}
	for _, tc := range changes {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if !strings.Contains(projectionBase, tc.old) {
				t.Fatalf("fixture lacks %q", tc.old)
			}
			src := strings.Replace(projectionBase, tc.old, tc.new, 1)
			// Both from the same directory, so only the edit differs.
			dir := t.TempDir()
			a := loadIn(t, dir, projectionBase)
			b := loadIn(t, dir, src)
			var same bool
			switch tc.kind {
			case "server":
				s, _ := a.Server(tc.block)
				o, _ := b.Server(tc.block)
				same = s.SameProjection(o)
			case "plugin":
				p, _ := a.Plugin(tc.block)
				o, _ := b.Plugin(tc.block)
				same = p.SameProjection(o)
			case "environment":
				e, _ := a.Environment(tc.block)
				o, _ := b.Environment(tc.block)
				same = e.SameProjection(o)
			}
			if same {
				t.Errorf("%s %s: changing %s still compares equal", tc.kind, tc.block, tc.name)
			}
		})
	}
}
