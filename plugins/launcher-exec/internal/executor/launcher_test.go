package executor_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolgate/toolgate/sdk/launcher"
)

// tricky is an env value that breaks any quoting that is not exact.
const tricky = "it's \"quoted\" $HOME `id` \\ ; echo pwned\nsecond line\t*"

// recorder is a custom executor's wrapper that records its argv and its
// own environment, then runs the rest of its argv with env in dir:
// record LOG DIR NAME=value... COMMAND ARGS...
const recorder = `log=$1; dir=$2; shift 2
{ printf 'argv:'; for a in "$@"; do printf ' [%s]' "$a"; done; printf '\n'; env | sed 's/^/env: /'; } > "$log"
cd "$dir" && exec env "$@"
`

// TestSameServerUnderEachExecutor runs mcp-demo under every executor that
// needs no outside service and checks that a user sees the same server:
// the same tools, the same answers, the env and cwd the README promises,
// and a 4 MiB result that survives the trip.
func TestSameServerUnderEachExecutor(t *testing.T) {
	scripts := t.TempDir()
	record := writeScript(t, scripts, "record", recorder)
	recordLog := filepath.Join(scripts, "record.log")

	tests := []struct {
		name string
		cfg  map[string]any
		// check inspects what the executor itself saw, if anything.
		check func(t *testing.T)
	}{
		{name: "local", cfg: map[string]any{"executor": "local"}},
		{name: "local under sandbox_prefix", cfg: map[string]any{"executor": "local", "sandbox_prefix": []string{"nice", "-n", "1"}}},
		{name: "custom with {{dir}} and {{env}}", cfg: map[string]any{
			"executor": "custom",
			"prefix":   []string{record, recordLog, "{{dir}}", "{{env}}", "{{command}}", "{{args}}"},
		}, check: func(t *testing.T) {
			b, err := os.ReadFile(recordLog)
			if err != nil {
				t.Fatal(err)
			}
			rec := string(b)
			if !containsAll(rec, "[GREETING=hello from the host]", "[TRICKY="+tricky+"]", "/mcp-demo]") {
				t.Errorf("the wrapper's argv lacks the env entries or the command:\n%s", rec)
			}
			if strings.Contains(rec, "env: GREETING=") {
				t.Errorf("the env entries leaked into the executor program's own environment:\n%s", rec)
			}
		}},
		{name: "custom with {{script}}", cfg: map[string]any{"executor": "custom", "prefix": []string{"sh", "-c", "{{script}}"}}},
		{name: "custom runs_locally", cfg: map[string]any{"executor": "custom", "prefix": []string{"nice", "-n", "1"}, "runs_locally": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			c := inProcess(t, tt.cfg)
			s := connect(t, c, launcher.Spec{
				Server:  "demo",
				Command: demo(t),
				Env:     baseEnv(map[string]string{"GREETING": "hello from the host", "TRICKY": tricky}),
				Dir:     dir,
			})

			var names []string
			for tool, err := range s.Tools(t.Context(), nil) {
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, tool.Name)
			}
			for _, want := range []string{"echo", "env", "pid", "echo_big"} {
				if !slices.Contains(names, want) {
					t.Errorf("tools/list = %v, want %s among them", names, want)
				}
			}

			if got, err := s.text(t.Context(), "echo", map[string]any{"text": "hi"}); err != nil || got != "hi" {
				t.Errorf("echo = %q, %v", got, err)
			}

			var env map[string]*string
			s.jsonTool(t, "env", map[string]any{"names": []string{"GREETING", "TRICKY", "PATH"}}, &env)
			wantDir, _ := filepath.EvalSymlinks(dir)
			gotDir := ""
			if env["cwd"] != nil {
				gotDir, _ = filepath.EvalSymlinks(*env["cwd"])
			}
			got := map[string]string{"GREETING": deref(env["GREETING"]), "TRICKY": deref(env["TRICKY"]), "cwd": gotDir}
			want := map[string]string{"GREETING": "hello from the host", "TRICKY": tricky, "cwd": wantDir}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("env and cwd the server sees (-want +got):\n%s", diff)
			}
			if env["PATH"] == nil {
				t.Errorf("the server has no PATH; the executor's base environment should supply one")
			}

			big := strings.Repeat("0123456789abcdef", 4<<20/16)
			if got, err := s.text(t.Context(), "echo_big", map[string]any{"data": big}); err != nil || got != big {
				t.Errorf("echo_big of 4 MiB = %d bytes, %v", len(got), err)
			}
			if tt.check != nil {
				tt.check(t)
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "<unset>"
	}
	return *s
}
