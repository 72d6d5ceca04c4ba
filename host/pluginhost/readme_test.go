package pluginhost_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/pluginhost"
	"github.com/toolgate/toolgate/internal/testbin"
)

// readmeBlock returns the fenced code block that follows marker in
// sdk/README.md.
func readmeBlock(t *testing.T, readme, marker string) string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, marker)
	if !ok {
		t.Fatalf("sdk/README.md has no %q", marker)
	}
	_, rest, _ = strings.Cut(rest, "```")
	_, rest, _ = strings.Cut(rest, "\n") // the info string
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatalf("sdk/README.md: unterminated code block after %q", marker)
	}
	return block
}

// TestReadmePluginExample keeps sdk/README.md's "Writing a plugin" honest:
// its Go code is the compiled example plugin, and its plugin block,
// pointed at that plugin, configures it so that it denies deletions.
func TestReadmePluginExample(t *testing.T) {
	t.Parallel()
	root := testbin.Root()
	raw, err := os.ReadFile(filepath.Join(root, "sdk", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	const example = "sdk/plugintest/testdata/denydeletes/main.go"
	src, err := os.ReadFile(filepath.Join(root, example))
	if err != nil {
		t.Fatal(err)
	}
	if got := readmeBlock(t, readme, "<!-- example: "+example+" -->"); got != string(src) {
		t.Errorf("the hook plugin in sdk/README.md differs from %s; copy the file into it again", example)
	}
	if n := strings.Count(string(src), "\n"); n >= 30 {
		t.Errorf("the hook plugin in sdk/README.md has %d lines; keep it under 30", n)
	}

	bin := filepath.Join(t.TempDir(), "deny-deletes")
	build := exec.Command("go", "build", "-o", bin, "./sdk/plugintest/testdata/denydeletes")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the plugin of sdk/README.md: %v\n%s", err, out)
	}
	block := readmeBlock(t, readme, "<!-- example: plugin block -->")
	block = strings.Replace(block, `"bin/plugins/deny-deletes"`, `"`+bin+`"`, 1)
	block = strings.Replace(block, `"…"`, `"`+sha256File(t, bin)+`"`, 1)
	h, _ := newHost(t, loadConfig(t, block), pluginhost.Options{})
	proc := approval.New(approval.Options{Hooks: h.Hooks()})

	del := request
	del.Tool = "delete_file"
	if d := proc.Decide(t.Context(), del); d.Approved || d.By != "deny-deletes" {
		t.Errorf("delete_file: %+v, want denied by the plugin", d)
	}
	ask := &asker{}
	proc = approval.New(approval.Options{Hooks: h.Hooks(), Asker: ask})
	if d := proc.Decide(t.Context(), request); d.Step != approval.StepUser || ask.count() != 1 {
		t.Errorf("write_file: %+v, want no decision from the plugin (the user is asked)", d)
	}
	if st := h.Status()[0]; st.Checksum != pluginhost.ChecksumVerified || st.Version != "1.0.0" {
		t.Errorf("status = %+v", st)
	}
}
