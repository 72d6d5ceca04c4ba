package testbin

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestEveryMainPackageIsListed keeps binaries.list the one list: a main
// package missing from it would be built by no make target and no image,
// and a listed local package that is not a main package builds nothing.
func TestEveryMainPackageIsListed(t *testing.T) {
	pkgs, err := packages()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-f", `{{if eq .Name "main"}}{{.ImportPath}}{{end}}`, "./...")
	cmd.Dir = Root()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/toolgate/toolgate/"
	var mains []string
	for _, p := range strings.Fields(string(out)) {
		mains = append(mains, "./"+strings.TrimPrefix(p, module))
	}
	var listed []string
	for _, pkg := range pkgs {
		if strings.HasPrefix(pkg, "./") {
			listed = append(listed, pkg)
		}
	}
	for _, m := range mains {
		if !slices.Contains(listed, m) {
			t.Errorf("main package %s is not in binaries.list", m)
		}
	}
	for _, l := range listed {
		if !slices.Contains(mains, l) {
			t.Errorf("binaries.list names %s, which is not a main package of this module", l)
		}
	}
}
