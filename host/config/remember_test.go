package config

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// copyFixture copies testdata/name into a temp dir with the given mode.
func copyFixture(t *testing.T, name string, mode os.FileMode) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "toolgate.hcl")
	if err := os.WriteFile(p, src, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // umask-proof
		t.Fatal(err)
	}
	return p
}

func checkGolden(t *testing.T, golden string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", golden)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", golden, diff)
	}
}

// approvals is the sequence the golden file records, one of each shape:
// an existing tool block with another mode (multi-line and single-line),
// an empty tool block, a missing block in a multi-line server (2- and
// 4-space indentation), a missing block in a single-line server, and a
// label that needs quoting.
var approvals = []struct{ server, tool string }{
	{"files", "write_file"},
	{"files", "read_file"},
	{"files", "stat"},
	{"files", "delete_file"},
	{"github", "create_issue"},
	{"tiny", `odd "name" ${x}`},
}

func TestRememberToolApprovalGolden(t *testing.T) {
	t.Parallel()
	path := copyFixture(t, "remember.hcl", 0o600)
	for _, a := range approvals {
		if err := RememberToolApproval(path, a.server, a.tool, ""); err != nil {
			t.Fatalf("RememberToolApproval(%s, %q): %v", a.server, a.tool, err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "remember.golden", got)

	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("mode after rewrite = %v, want the original 0600", info.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*")); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}

	// The edited file is a valid config that says what was approved.
	cfg, diags := Load(path, LoadOptions{LookupEnv: fakeEnv(map[string]string{"GITHUB_TOKEN": "x"})})
	if diags.HasErrors() {
		t.Fatalf("Load after edits: %s", diags.Error())
	}
	for _, a := range approvals {
		s, _ := cfg.Server(a.server)
		if got := s.Tools[a.tool].ApprovalMode; got != ModeRemembered {
			t.Errorf("server %s tool %q: approval_mode = %q, want remembered", a.server, a.tool, got)
		}
	}

	// A second round changes nothing and does not even rewrite the file.
	for _, a := range approvals {
		if err := RememberToolApproval(path, a.server, a.tool, ""); err != nil {
			t.Fatalf("second RememberToolApproval(%s, %q): %v", a.server, a.tool, err)
		}
	}
	again, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(got), string(again)); diff != "" {
		t.Errorf("second round changed the file (-first +second):\n%s", diff)
	}
	info2, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(info, info2) {
		t.Error("second round replaced the file; a no-op must not write")
	}
}

// The fixture itself must match the golden everywhere except the edits:
// every other line, comment and odd spacing is kept byte for byte.
func TestRememberToolApprovalKeepsUntouchedLines(t *testing.T) {
	t.Parallel()
	before, err := os.ReadFile(filepath.Join("testdata", "remember.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(filepath.Join("testdata", "remember.golden"))
	if err != nil {
		t.Fatal(err)
	}
	afterLines := map[string]bool{}
	for _, l := range strings.Split(string(after), "\n") {
		afterLines[l] = true
	}
	edited := map[string]bool{ // lines the edits are allowed to replace
		`    approval_mode = "prompt"    # was: ask every time`: true,
		`  tool "read_file" { approval_mode = "auto" }`:         true,
		`  tool "stat" {}`:                       true,
		`server "tiny" { command = "mcp-tiny" }`: true,
	}
	for _, l := range strings.Split(string(before), "\n") {
		if !afterLines[l] && !edited[l] {
			t.Errorf("line lost or altered: %q", l)
		}
	}
}

func TestRememberToolApprovalCRLF(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "c.hcl")
	src := "server \"s\" {\r\n  command = \"x\"\r\n}\r\n"
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := RememberToolApproval(p, "s", "t", ""); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	want := "server \"s\" {\r\n  command = \"x\"\r\n  tool \"t\" {\r\n    approval_mode = \"remembered\"\r\n  }\r\n}\r\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRememberToolApprovalThroughSymlink(t *testing.T) {
	t.Parallel()
	real := copyFixture(t, "remember.hcl", 0o644)
	link := filepath.Join(t.TempDir(), "link.hcl")
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	if err := RememberToolApproval(link, "tiny", "x", ""); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced by a file (err %v)", err)
	}
	got, _ := os.ReadFile(real)
	if !strings.Contains(string(got), `tool "x" {`) {
		t.Errorf("the link target was not edited:\n%s", got)
	}
}

func TestRememberToolApprovalErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, path, server string
		want               []string
	}{
		{
			name:   "server defined elsewhere",
			path:   write("other.hcl", "server \"a\" {\n  command = \"x\"\n}\n"),
			server: "b",
			want:   []string{`server "b" is not defined in`, "other.hcl", `tool "t" { approval_mode = "remembered" }`, "by hand"},
		},
		{
			name:   "file does not parse",
			path:   write("broken.hcl", "server \"a\" {\n  command = \n"),
			server: "a",
			want:   []string{"broken.hcl does not parse", "Fix the file"},
		},
		{
			name:   "file missing",
			path:   filepath.Join(dir, "missing.hcl"),
			server: "a",
			want:   []string{"missing.hcl", "still exists"},
		},
		{
			name:   "server defined twice",
			path:   write("twice.hcl", "server \"a\" {\n  command = \"x\"\n}\nserver \"a\" {\n  command = \"y\"\n}\n"),
			server: "a",
			want:   []string{`defines server "a" twice (lines 1 and 4)`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			before, _ := os.ReadFile(tc.path)
			err := RememberToolApproval(tc.path, tc.server, "t", "")
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			after, _ := os.ReadFile(tc.path)
			if string(before) != string(after) {
				t.Error("a failed call changed the file")
			}
		})
	}
}

func TestRememberToolApprovalReadOnlyDir(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions")
	}
	path := copyFixture(t, "remember.hcl", 0o644)
	dir := filepath.Dir(path)
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
	err := RememberToolApproval(path, "tiny", "x", "")
	if err == nil || !strings.Contains(err.Error(), "writable") || !strings.Contains(err.Error(), "by hand") {
		t.Errorf("error = %v, want one naming the fix", err)
	}
}

// TestRememberToolApprovalBindsTheDefinition: the approval records the
// definition hash the user approved; approving again after the server
// changed the tool updates only the hash; the operator's "approve" is
// never touched.
func TestRememberToolApprovalBindsTheDefinition(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "d.hcl")
	src := "server \"s\" {\n  command = \"x\"\n  tool \"op\" { approval_mode = \"approve\" }\n}\n"
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	v1, v2 := "sha256:"+strings.Repeat("a", 64), "sha256:"+strings.Repeat("b", 64)
	for _, step := range []struct{ tool, def string }{{"t", v1}, {"t", v1}, {"t", v2}, {"op", v1}} {
		if err := RememberToolApproval(p, "s", step.tool, step.def); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := os.ReadFile(p)
	want := "server \"s\" {\n  command = \"x\"\n  tool \"op\" { approval_mode = \"approve\" }\n" +
		"  tool \"t\" {\n    approval_mode = \"remembered\"\n    approved_definition = \"" + v2 + "\"\n  }\n}\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	cfg, diags := Load(p, LoadOptions{LookupEnv: fakeEnv(nil)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	s, _ := cfg.Server("s")
	if tc := s.Tools["t"]; tc.ApprovalMode != ModeRemembered || tc.ApprovedDefinition != v2 {
		t.Errorf("loaded tool t = %+v", tc)
	}
}
