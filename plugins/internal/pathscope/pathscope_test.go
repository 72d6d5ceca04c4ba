package pathscope_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/plugins/internal/pathscope"
)

// tree builds root/{work/{sub,escape -> ../outside, loop -> loop, self -> .},
// outside} and returns root with its own symlinks resolved.
func tree(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"work/sub", "outside"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"work/escape": "../outside",
		"work/abs":    filepath.Join(root, "outside"),
		"work/loop":   "loop",
		"work/self":   ".",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestResolveAndWithin(t *testing.T) {
	root := tree(t)
	work := filepath.Join(root, "work")
	for _, tt := range []struct {
		name, path string
		inside     bool
	}{
		{"relative file", "a.txt", true},
		{"new nested file", "sub/new/deeper.txt", true},
		{"dot dot inside", "sub/../a.txt", true},
		{"dot dot outside", "../outside/a.txt", false},
		{"absolute inside", filepath.Join(work, "sub"), true},
		{"absolute outside", "/etc/passwd", false},
		{"relative symlink escapes", "escape/secret", false},
		{"absolute symlink escapes", "abs/secret", false},
		{"dot dot through a symlink", "escape/../outside/a.txt", false}, // lexically work/outside/a.txt
		{"symlink to self stays", "self/self/a.txt", true},
		{"workspace itself", ".", true},
		{"file URL outside", "file:///etc/hosts", false},
		{"prefix sibling is outside", work + "-other/a", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pathscope.Resolve(tt.path, work, "")
			if err != nil {
				t.Fatalf("Resolve(%q) error: %v", tt.path, err)
			}
			if inside := pathscope.Within(got, work); inside != tt.inside {
				t.Errorf("Within(Resolve(%q) = %q, %q) = %v, want %v", tt.path, got, work, inside, tt.inside)
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	root := tree(t)
	if _, err := pathscope.Resolve("a.txt", "", ""); !errors.Is(err, pathscope.ErrRelative) {
		t.Errorf("relative path without base: err = %v, want ErrRelative", err)
	}
	if _, err := pathscope.Resolve("loop/x", filepath.Join(root, "work"), ""); err == nil {
		t.Error("a symlink loop resolved without error")
	}
}

func TestResolveHome(t *testing.T) {
	got, err := pathscope.Resolve("~/.ssh/id_rsa", "/somewhere", "/nonexistent-home")
	if err != nil {
		t.Fatal(err)
	}
	if want := "/nonexistent-home/.ssh/id_rsa"; got != want {
		t.Errorf("Resolve(~/.ssh/id_rsa) = %q, want %q", got, want)
	}
}
