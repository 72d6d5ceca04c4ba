package plugintest_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/hook"
	"github.com/toolgate/toolgate/sdk/launcher"
	"github.com/toolgate/toolgate/sdk/plugintest"
)

// denyDeletes is a hook under test: it denies tools named delete*.
type denyDeletes struct{ hook.Base }

func (denyDeletes) Events() []hook.Event { return []hook.Event{hook.EventPermissionRequest} }

func (denyDeletes) PermissionRequest(_ context.Context, req hook.Request) (hook.PermissionResult, error) {
	if strings.HasPrefix(req.Tool, "delete") {
		return hook.Deny("deleting is not allowed here; ask the user to do it"), nil
	}
	return hook.NoDecision(), nil
}

// A test serves the hook in-process and calls it as the host would.
// (In a real test, pass the test's *testing.T instead of t.)
func ExampleHook() {
	t := newExampleT()
	defer t.finish()

	h := plugintest.Hook(t, denyDeletes{})
	ctx := context.Background()
	for _, tool := range []string{"delete_file", "read_file"} {
		res, err := h.PermissionRequest(ctx, hook.Request{Server: "files", Tool: tool})
		fmt.Printf("%s: %v %q %v\n", tool, res.Decision, res.Message, err)
	}
	// Output:
	// delete_file: deny "deleting is not allowed here; ask the user to do it" <nil>
	// read_file: none "" <nil>
}

// echoLauncher runs every process locally.
type echoLauncher struct{}

func (echoLauncher) Start(_ context.Context, spec launcher.Spec) (launcher.Process, error) {
	cmd := exec.Command(spec.Command, spec.Args...)
	cmd.Env = spec.Environ()
	return launcher.StartCommand(cmd)
}

// A launcher under test starts a process; the host side reads its output
// and waits for it.
func ExampleLauncher() {
	t := newExampleT()
	defer t.finish()

	l := plugintest.Launcher(t, echoLauncher{})
	p, err := l.Launch(context.Background(), launcher.Spec{
		Server:  "demo",
		Command: "sh",
		Args:    []string{"-c", "echo hello from $WHO; exit 3"},
		Env:     map[string]string{"PATH": os.Getenv("PATH"), "WHO": "the launcher"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := io.ReadAll(p)
	fmt.Printf("%s", out)
	fmt.Println(p.Wait(context.Background()))
	fmt.Println(p.Close())
	// Output:
	// hello from the launcher
	// exit status 3
	// <nil>
}

// A built plugin binary runs as a real process, started the way the host
// starts plugins. (In a real test, pass the test's *testing.T.)
func ExampleRunBinary() {
	t := newExampleT()
	defer t.finish()

	path := filepath.Join(t.tempDir, "deny-deletes")
	if out, err := exec.Command("go", "build", "-o", path, "./testdata/denydeletes").CombinedOutput(); err != nil {
		fmt.Printf("building the plugin: %v\n%s", err, out)
		return
	}

	h := plugintest.RunBinary(t, path, sdk.KindHook).(*hook.Client)
	ctx := context.Background()
	info, err := h.Info(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(info.Name, info.Version, info.Kind, info.Has(string(hook.EventPermissionRequest)))
	res, err := h.PermissionRequest(ctx, hook.Request{Server: "files", Tool: "delete_everything"})
	fmt.Println(res.Decision, err)
	// Output:
	// deny-deletes 1.0.0 hook true
	// deny <nil>
}

// exampleT stands in for the *testing.T of a real test, which examples do
// not get. Only the methods the helpers use are implemented.
type exampleT struct {
	testing.TB
	tempDir  string
	cleanups []func()
}

func newExampleT() *exampleT {
	dir, err := os.MkdirTemp("", "plugintest-example-")
	if err != nil {
		panic(err)
	}
	return &exampleT{tempDir: dir}
}

func (t *exampleT) Helper()                        {}
func (t *exampleT) Logf(string, ...any)            {}
func (t *exampleT) Cleanup(f func())               { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) Fatal(args ...any)              { panic(fmt.Sprint(args...)) }
func (t *exampleT) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }

func (t *exampleT) finish() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
	_ = os.RemoveAll(t.tempDir)
}
