package executor_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolgate/toolgate/sdk/launcher"
)

// Stand-ins for the docker, kubectl and nomad CLIs: they parse the command
// line the way the real CLIs do for the flags launcher-exec uses, refuse an
// unknown container, pod or allocation the way the real ones do, and run
// the command on this machine. No daemon or cluster is needed; the real
// CLIs' behaviour is pinned by TestPlanArgv.
const (
	fakeDocker = `shift # exec
while [ $# -gt 0 ]; do
  case $1 in
    -i) shift ;;
    -u) shift 2 ;;
    -w) cd "$2" || exit 126; shift 2 ;;
    -e) export "$2"; shift 2 ;; # NAME takes the CLI's own value, NAME=value sets it
    -*) echo "unknown flag: $1" >&2; exit 125 ;;
    *) break ;;
  esac
done
if [ "$1" = missing ]; then echo "Error response from daemon: No such container: missing" >&2; exit 1; fi
shift
exec "$@"
`
	fakeKubectl = `while [ $# -gt 0 ]; do
  case $1 in
    --) shift; break ;;
    --context|-n|-c) shift 2 ;;
    exec|-i) shift ;;
    missing) echo 'Error from server (NotFound): pods "missing" not found' >&2; exit 1 ;;
    -*) echo "error: unknown flag: $1" >&2; exit 1 ;;
    *) shift ;;
  esac
done
exec "$@"
`
	fakeNomad = `shift 2 # alloc exec
while [ $# -gt 0 ]; do
  case $1 in
    -i=true|-t=false) shift ;;
    -namespace|-task) shift 2 ;;
    -*) echo "flag provided but not defined: $1" >&2; exit 1 ;;
    missing) echo 'No allocation(s) with prefix or id "missing" found' >&2; exit 1 ;;
    *) shift; break ;;
  esac
done
exec "$@"
`
)

// TestContainerExecutorsAgainstStandInCLIs runs mcp-demo through the
// docker, kubectl and nomad executors (with stand-in CLIs) and checks that
// env and cwd arrive as documented and that a missing target is the CLI's
// error, quoted.
func TestContainerExecutorsAgainstStandInCLIs(t *testing.T) {
	bin := t.TempDir()
	docker := writeScript(t, bin, "docker", fakeDocker)
	kubectl := writeScript(t, bin, "kubectl", fakeKubectl)
	nomad := writeScript(t, bin, "nomad", fakeNomad)

	tests := []struct {
		name    string
		cfg     map[string]any
		missing map[string]any // the same with an unknown target
		// startError: the missing target is a start error (shell-based
		// executors); otherwise an early exit with the CLI's stderr.
		startError bool
	}{
		{
			name:    "docker",
			cfg:     map[string]any{"executor": "docker", "docker": docker, "container": "tools", "user": "app"},
			missing: map[string]any{"executor": "docker", "docker": docker, "container": "missing"},
		},
		{
			name:       "docker with shell",
			cfg:        map[string]any{"executor": "docker", "docker": docker, "container": "tools", "shell": "sh"},
			missing:    map[string]any{"executor": "docker", "docker": docker, "container": "missing", "shell": "sh"},
			startError: true,
		},
		{
			name:       "kubectl",
			cfg:        map[string]any{"executor": "kubectl", "kubectl": kubectl, "pod": "mcp-0", "container": "tools", "namespace": "ai", "context": "prod"},
			missing:    map[string]any{"executor": "kubectl", "kubectl": kubectl, "pod": "missing"},
			startError: true,
		},
		{
			name:       "nomad",
			cfg:        map[string]any{"executor": "nomad", "nomad": nomad, "alloc": "5b9f4c1e", "task": "tools", "namespace": "ai"},
			missing:    map[string]any{"executor": "nomad", "nomad": nomad, "alloc": "missing"},
			startError: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s := connect(t, inProcess(t, tt.cfg), launcher.Spec{
				Server:  "demo",
				Command: demo(t),
				Env:     baseEnv(map[string]string{"GREETING": "hello in a container", "TRICKY": tricky}),
				Dir:     dir,
			})
			var env map[string]*string
			s.jsonTool(t, "env", map[string]any{"names": []string{"GREETING", "TRICKY"}}, &env)
			got := map[string]string{"GREETING": deref(env["GREETING"]), "TRICKY": deref(env["TRICKY"]), "cwd": deref(env["cwd"])}
			want := map[string]string{"GREETING": "hello in a container", "TRICKY": tricky, "cwd": dir}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("env and cwd the server sees (-want +got):\n%s", diff)
			}

			ctx, cancel := context.WithTimeout(t.Context(), startBound)
			defer cancel()
			p, err := inProcess(t, tt.missing).Launch(ctx, launcher.Spec{Server: "demo", Command: demo(t)})
			if tt.startError {
				se := startError(t, err)
				if se.Kind != launcher.KindExecutor || !strings.Contains(se.StderrExcerpt, "missing") || !strings.Contains(se.Message, "exit status 1") {
					t.Errorf("start error = kind %v, message %q, stderr %q; want the CLI's refusal", se.Kind, se.Message, se.StderrExcerpt)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = p.Close() }()
			stderr, _ := io.ReadAll(p.Stderr())
			var ee *launcher.ExitError
			if err := p.Wait(ctx); !errors.As(err, &ee) || ee.Code != 1 || !strings.Contains(string(stderr), "No such container: missing") {
				t.Errorf("Wait = %v, stderr %q; want exit status 1 and the CLI's refusal", err, stderr)
			}
		})
	}
}
