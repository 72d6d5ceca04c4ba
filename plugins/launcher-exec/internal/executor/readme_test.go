package executor_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/plugins/launcher-exec/internal/executor"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/launcher"
	"github.com/toolgate/toolgate/sdk/plugintest"
)

// environmentsPage is docs/environments.md, "Running servers elsewhere",
// whose examples configure this plugin.
const environmentsPage = "docs/environments.md"

// readDoc returns a documentation file of the repository.
func readDoc(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testbin.Root(), filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var fence = regexp.MustCompile("(?s)```(hcl|go)\n(.*?)```")

// TestReadmeExamplesAreValid decodes every environment block of
// docs/environments.md with the plugin's own configuration code, and
// checks that each server names an environment the page defines, so the
// examples cannot drift from the plugin.
func TestReadmeExamplesAreValid(t *testing.T) {
	section := readDoc(t, environmentsPage)
	envs := map[string]bool{}
	var servers [][2]string // server, environment
	nExec := 0
	for _, m := range fence.FindAllStringSubmatch(section, -1) {
		if m[1] != "hcl" {
			continue
		}
		f, diags := hclsyntax.ParseConfig([]byte(m[2]), environmentsPage, hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatalf("hcl block of "+environmentsPage+" does not parse: %v\n%s", diags, m[2])
		}
		for _, block := range f.Body.(*hclsyntax.Body).Blocks {
			switch block.Type {
			case "environment":
				envs[block.Labels[0]] = true
				if launcherName(t, block) != "exec" {
					continue
				}
				nExec++
				raw := configJSON(t, block)
				if _, diags := executor.ParseConfig(raw); len(diags) != 0 {
					t.Errorf("environment %q: the plugin refuses its config %s: %v", block.Labels[0], raw, diags)
				}
			case "server":
				attr, ok := block.Body.Attributes["environment"]
				if !ok {
					t.Errorf("server %q in "+environmentsPage+" runs in no environment", block.Labels[0])
					continue
				}
				v, _ := attr.Expr.Value(nil)
				servers = append(servers, [2]string{block.Labels[0], v.AsString()})
			}
		}
	}
	if nExec < 7 {
		t.Errorf(environmentsPage+" shows %d environment blocks for launcher-exec, want one per executor", nExec)
	}
	for _, s := range servers {
		if !envs[s[1]] {
			t.Errorf("server %q names environment %q, which "+environmentsPage+" does not define", s[0], s[1])
		}
	}
}

func launcherName(t *testing.T, block *hclsyntax.Block) string {
	t.Helper()
	v, diags := block.Body.Attributes["launcher"].Expr.Value(nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return v.AsString()
}

// configJSON evaluates a config {} body the way the host hands it to the
// plugin: a JSON object of its attributes. env("X") stands for a value
// from toolgate's environment.
func configJSON(t *testing.T, env *hclsyntax.Block) json.RawMessage {
	t.Helper()
	ctx := &hcl.EvalContext{Functions: map[string]function.Function{
		"env": function.New(&function.Spec{
			Params: []function.Parameter{{Name: "name", Type: cty.String}},
			Type:   function.StaticReturnType(cty.String),
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				return cty.StringVal("value-of-" + args[0].AsString()), nil
			},
		}),
	}}
	out := map[string]json.RawMessage{}
	for _, block := range env.Body.Blocks {
		if block.Type != "config" {
			continue
		}
		for name, attr := range block.Body.Attributes {
			v, diags := attr.Expr.Value(ctx)
			if diags.HasErrors() {
				t.Fatalf("environment %q: %s: %v", env.Labels[0], name, diags)
			}
			b, err := ctyjson.Marshal(v, v.Type())
			if err != nil {
				t.Fatal(err)
			}
			out[name] = b
		}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestReadmeLauncherExample builds the example plugin of sdk/README.md,
// checks that sdk/README.md shows it verbatim, and runs an MCP session
// through it.
func TestReadmeLauncherExample(t *testing.T) {
	src := filepath.Join(testbin.Root(), "plugins", "launcher-exec", "example", "main.go")
	code, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	shown := false
	for _, m := range fence.FindAllStringSubmatch(readDoc(t, "sdk/README.md"), -1) {
		shown = shown || (m[1] == "go" && m[2] == string(code))
	}
	if !shown {
		t.Errorf("sdk/README.md does not show %s verbatim; copy the file into its go block", src)
	}

	bin := filepath.Join(t.TempDir(), "toolgate-launcher-nice")
	build := exec.Command("go", "build", "-o", bin, "./plugins/launcher-exec/example")
	build.Dir = testbin.Root()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the example: %v\n%s", err, out)
	}
	c := plugintest.RunBinary(t, bin, sdk.KindLauncher).(*launcher.Client)
	if diags, err := c.Configure(t.Context(), json.RawMessage(`{"niceness": 25}`)); err != nil || !sdk.HasErrors(diags) {
		t.Errorf("Configure(niceness = 25) = %v, %v; want it refused", diags, err)
	}
	configure(t, c, map[string]any{"niceness": 15})
	s := connect(t, c, launcher.Spec{Server: "demo", Command: demo(t), Env: baseEnv(nil), Dir: t.TempDir()})
	if got, err := s.text(t.Context(), "echo", map[string]any{"text": "nice"}); err != nil || got != "nice" {
		t.Errorf("echo through the example launcher = %q, %v", got, err)
	}
	pid := s.remotePid(t)
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		t.Fatal(err)
	}
	// Field 19 of /proc/PID/stat is the nice value; the command name
	// (field 2) is in parentheses and may hold spaces.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if fields[16] != "15" {
		t.Errorf("the server runs at nice %s, want 15", fields[16])
	}
}
