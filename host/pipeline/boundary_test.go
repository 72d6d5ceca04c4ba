package pipeline_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/toolgate/toolgate"

// senders are the methods that send a request to an MCP server, by
// receiver type, with the only packages that may use them (call them or
// take them as a func value). Tests are not checked.
var senders = []struct {
	recv    string // package path.Type
	methods []string
	allowed []string // package paths
	why     string
}{
	{recv: module + "/host/manager.Manager",
		methods: []string{"CallTool", "ReadResource", "GetPrompt", "Complete", "Subscribe", "Unsubscribe"},
		allowed: []string{module + "/host/manager", module + "/host/pipeline", module + "/host/execution"},
		why:     "send it through the pipeline: host.Host.Pipeline().Do(ctx, pipeline.Request{...})"},
	{recv: module + "/host/pipeline.Servers",
		methods: []string{"ReadResource", "GetPrompt", "Complete", "Subscribe", "Unsubscribe"},
		allowed: []string{module + "/host/pipeline"},
		why:     "send it through the pipeline: host.Host.Pipeline().Do(ctx, pipeline.Request{...})"},
	{recv: module + "/host/execution.Executor",
		methods: []string{"Execute"},
		allowed: []string{module + "/host/pipeline"},
		why:     "a tool call runs through the pipeline (Step.Call or Pipeline().Do with Kind ToolCall), which executes it"},
	{recv: module + "/host/mcpclient.Client",
		methods: []string{"CallTool", "ReadResource", "GetPrompt", "Complete", "Subscribe", "Unsubscribe"},
		allowed: []string{module + "/host/mcpclient", module + "/host/manager"},
		why:     "servers are reached through the manager, and the manager only through the pipeline"},
}

// TestOnlyThePipelineSendsRequests is the boundary make check enforces:
// no package of host/ but the pipeline (and what it runs) sends a request
// to a server, so no door can skip admission, hooks, approval or audit.
// It type-checks every host/ package against the export data go list
// builds, and looks for uses of the sending methods.
func TestOnlyThePipelineSendsRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks every host/ package")
	}
	violations, err := senderUses(t, "../..")
	if err != nil {
		t.Fatal(err)
	}
	if len(violations) > 0 {
		t.Fatalf("these uses send requests to servers outside the pipeline; every request must go through "+
			"host/pipeline (admission, audit, hooks, approval):\n%s", strings.Join(violations, "\n"))
	}
}

type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Export     string
	Standard   bool
}

func senderUses(t *testing.T, root string) ([]string, error) {
	cmd := exec.CommandContext(t.Context(), "go", "list", "-export", "-deps", "-json", "./host/...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w\n%s", err, stderr.String())
	}
	exports := map[string]string{}
	var ours []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, err
		}
		exports[p.ImportPath] = p.Export
		if strings.HasPrefix(p.ImportPath, module+"/host") {
			ours = append(ours, p)
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	var violations []string
	for _, p := range ours {
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			files = append(files, f)
		}
		info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
		var typeErrs []error
		conf := types.Config{Importer: imp, Error: func(err error) { typeErrs = append(typeErrs, err) }}
		if _, err := conf.Check(p.ImportPath, fset, files, info); err != nil && len(info.Selections) == 0 {
			return nil, fmt.Errorf("type-checking %s: %w", p.ImportPath, errors.Join(typeErrs...))
		}
		for sel, s := range info.Selections {
			if v := violation(p.ImportPath, s); v != "" {
				violations = append(violations, fmt.Sprintf("%s: %s", fset.Position(sel.Sel.Pos()), v))
			}
		}
	}
	sort.Strings(violations)
	return violations, nil
}

// violation describes a forbidden use of a sending method in pkg, or "".
func violation(pkg string, s *types.Selection) string {
	fn, ok := s.Obj().(*types.Func)
	if !ok || fn.Pkg() == nil {
		return ""
	}
	recv := fn.Signature().Recv()
	if recv == nil {
		return ""
	}
	rt := recv.Type()
	if p, ok := rt.(*types.Pointer); ok {
		rt = p.Elem()
	}
	named, ok := rt.(*types.Named)
	if !ok || named.Obj().Pkg() == nil {
		return ""
	}
	recvName := named.Obj().Pkg().Path() + "." + named.Obj().Name()
	for _, rule := range senders {
		if rule.recv != recvName || !contains(rule.methods, fn.Name()) || contains(rule.allowed, pkg) {
			continue
		}
		return fmt.Sprintf("%s uses %s.%s: %s", pkg, named.Obj().Name(), fn.Name(), rule.why)
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
