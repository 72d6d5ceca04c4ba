package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/contain"
	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/internal/testwait"
)

// TestNoProcessOutlivesToolgate runs every row of issue 22's table with a
// real toolgate and a server (mcp-demo --spawn-family) that starts three
// children in its process group and a grandchild in a session of its own:
// however toolgate ends (SIGTERM, SIGKILL, a normal exit) and whatever the
// command (serve, servers, call), not one of those five processes, nor
// toolgate's supervisor, is left, checked by pid. Each row runs with
// cgroups and with the subreaper fallback (forced by TOOLGATE_CONTAINMENT).
func TestNoProcessOutlivesToolgate(t *testing.T) {
	type row struct {
		name    string
		command string   // serve, servers or call
		stop    string   // "sigterm", "sigkill" or "normal"
		server  []string // extra mcp-demo flags
		// launcher runs the server through the launcher-exec plugin's
		// local executor: the plugin, not toolgate, starts it.
		launcher bool
	}
	rows := []row{
		{"serve sigterm", "serve", "sigterm", nil, false},
		{"serve sigkill", "serve", "sigkill", nil, false},
		{"serve normal exit", "serve", "normal", nil, false},
		{"servers sigterm", "servers", "sigterm", []string{"--hang-initialize"}, false},
		{"servers sigkill", "servers", "sigkill", []string{"--hang-initialize"}, false},
		{"servers normal exit", "servers", "normal", nil, false},
		{"call sigterm", "call", "sigterm", []string{"--hang-initialize"}, false},
		{"call sigkill", "call", "sigkill", []string{"--hang-initialize"}, false},
		{"call normal exit", "call", "normal", nil, false},
		{"serve sigterm, server ignores sigterm", "serve", "sigterm", []string{"--ignore-sigterm"}, false},
		{"serve sigterm, through launcher-exec", "serve", "sigterm", nil, true},
		{"serve sigkill, through launcher-exec", "serve", "sigkill", nil, true},
		{"servers normal exit, through launcher-exec", "servers", "normal", nil, true},
	}
	for _, mode := range []contain.Kind{contain.KindCgroup, contain.KindSubreaper} {
		t.Run(string(mode), func(t *testing.T) {
			env := []string{contain.ModeEnv + "=" + string(mode)}
			if mode == contain.KindCgroup {
				env[0] = contain.ModeEnv + "=auto"
				requireContainment(t, env, mode)
			}
			for _, r := range rows {
				t.Run(r.name, func(t *testing.T) {
					fifo, lines, stop, err := procwatch.LineFIFO(t.TempDir())
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(stop)
					top, body := "", ""
					if r.launcher {
						top = fmt.Sprintf("plugin \"exec\" {\n  kind = \"launcher\"\n  path = %q\n}\n"+
							"environment \"box\" {\n  launcher = \"exec\"\n  config {\n    executor = \"local\"\n  }\n}\n",
							testbin.Path(t, "plugins/toolgate-launcher-exec"))
						body = `environment = "box"`
					}
					cfg := writeConfig(t, top, demoServer(t, "demo", filepath.Join(t.TempDir(), "calls"), body,
						append([]string{"--spawn-family", fifo}, r.server...)...))
					args := map[string][]string{
						"serve":   {"serve", "--http", "127.0.0.1:0"},
						"servers": {"servers"},
						"call":    {"call", "mcp__demo__echo", `{"text":"hi"}`},
					}[r.command]
					if r.command == "serve" && r.stop == "normal" {
						args = []string{"serve"} // stdio: the client closing stdin is the normal end
					}
					cmd := procwatch.DieWithTest(exec.Command(testbin.Path(t, "toolgate"), append(args, "--config", cfg)...))
					cmd.Env = append(os.Environ(), env...)
					stdin, err := cmd.StdinPipe()
					if err != nil {
						t.Fatal(err)
					}
					if err := cmd.Start(); err != nil {
						t.Fatal(err)
					}
					exited := make(chan error, 1)
					go func() { exited <- cmd.Wait() }()
					t.Cleanup(func() {
						_ = cmd.Process.Kill()
						<-exited
					})

					family := waitFamily(t, lines)
					// servers and call end on their own in a normal exit,
					// and may have ended the family already: only a stop
					// this test makes has live processes to check first.
					selfEnding := r.stop == "normal" && r.command != "serve"
					for _, pid := range family {
						if !selfEnding && !procwatch.Alive(pid) {
							t.Fatalf("process %d of the server's family is not running before the stop", pid)
						}
					}
					// The supervisor and anything else toolgate started.
					watched := append(family, descendants(cmd.Process.Pid)...)
					switch r.stop {
					case "sigterm":
						err = cmd.Process.Signal(syscall.SIGTERM)
					case "sigkill":
						err = cmd.Process.Signal(syscall.SIGKILL)
					case "normal":
						// serve stdio ends; servers and call end by themselves
						// (and may have closed the pipe by exiting already).
						_ = stdin.Close()
					}
					if err != nil {
						t.Fatal(err)
					}
					testwait.Recv(t, exited, "toolgate to exit (stop %s)", r.stop)
					exited <- nil // for the cleanup
					ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
					defer cancel()
					for _, pid := range watched {
						if err := procwatch.WaitGone(ctx, pid); err != nil {
							t.Errorf("process %d (family %v) outlived toolgate: %v", pid, family, err)
							_ = syscall.Kill(pid, syscall.SIGKILL)
						}
					}
				})
			}
		})
	}
}

// requireContainment skips when this machine cannot give toolgate the
// containment (cgroups need a writable cgroup2, e.g. root) and otherwise
// checks that `toolgate servers --json` reports it.
func requireContainment(t *testing.T, env []string, want contain.Kind) {
	t.Helper()
	cfg := writeConfig(t, "", demoServer(t, "demo", filepath.Join(t.TempDir(), "calls"), ""))
	cmd := exec.Command(testbin.Path(t, "toolgate"), "servers", "--json", "--config", cfg)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("toolgate servers --json: %v\n%s", err, out)
	}
	var v struct {
		Servers []struct{ Containment string }
	}
	if err := json.Unmarshal(out, &v); err != nil || len(v.Servers) != 1 {
		t.Fatalf("toolgate servers --json: %v\n%s", err, out)
	}
	if got := v.Servers[0].Containment; got != string(want) {
		if os.Geteuid() != 0 {
			if want == contain.KindCgroup {
				testbin.SkipWithoutCgroup(t, "containment here is %q, not %q (not root: no writable cgroup2)", got, want)
			}
			t.Skipf("containment here is %q, not %q", got, want)
		}
		t.Fatalf("containment = %q, want %q", got, want)
	}
}

// waitFamily reads the pids mcp-demo --spawn-family reports.
func waitFamily(t *testing.T, lines <-chan string) []int {
	t.Helper()
	line := testwait.Recv(t, lines, "the server to report its family")
	var pids []int
	for f := range strings.FieldsSeq(line) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("family line %q: %v", line, err)
		}
		pids = append(pids, pid)
	}
	if len(pids) != 5 {
		t.Fatalf("family line %q: want 5 pids", line)
	}
	return pids
}
