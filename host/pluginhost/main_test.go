package pluginhost_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/launch"
	"github.com/toolgate/toolgate/host/pluginhost"
	"github.com/toolgate/toolgate/internal/contain"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/sdk/guardian"
)

// pluginDir holds the test plugins (testplugins/plugins/*): the directory
// `make test` names in TOOLGATE_TESTPLUGINS_DIR, or a temporary one this
// TestMain builds them into.
var pluginDir string

const envPrebuilt = "TOOLGATE_TESTPLUGINS_DIR"

// The test binary doubles as a host process that the SIGKILL test kills
// (see holdPlugins).
const (
	envHelper       = "PLUGINHOST_TEST_HELPER"
	envHelperConfig = "PLUGINHOST_TEST_CONFIG"
)

func TestMain(m *testing.M) {
	contain.RunSupervisorIfAsked()
	if os.Getenv(envHelper) == "hold" {
		os.Exit(holdPlugins(os.Getenv(envHelperConfig)))
	}
	// Started through a symlink named after a test Guardian (the host
	// gives plugins no environment to say so), the binary serves it.
	if g, ok := testGuardians[filepath.Base(os.Args[0])]; ok {
		guardian.Serve(g)
		os.Exit(0)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	pluginDir = os.Getenv(envPrebuilt)
	if pluginDir == "" {
		dir, err := os.MkdirTemp("", "toolgate-pluginhost-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./testplugins/plugins/...")
		cmd.Dir = testbin.Root()
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building the test plugins: %v\n%s", err, out)
			return 1
		}
		pluginDir = dir
	}
	code := m.Run()
	testbin.Cleanup()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	return code
}

func bin(name string) string { return filepath.Join(pluginDir, name) }

// holdPlugins is the helper host: it loads the config, starts every hook
// plugin and launcher plugin in it (a launcher also starts `sleep` as a
// server process), prints "pids P1 P2 ..." (plugins, then launched
// processes) and waits to be killed.
func holdPlugins(path string) int {
	cfg, diags := config.Load(path, config.LoadOptions{})
	if diags.HasErrors() {
		fmt.Fprintln(os.Stderr, diags.Error())
		return 2
	}
	h := pluginhost.New(cfg, pluginhost.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var pids []string
	for _, hk := range h.HookAdapters() {
		if _, err := hk.PermissionRequest(ctx, approval.Request{Server: "s", Tool: "t"}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	for _, e := range cfg.Environments {
		l, err := h.Launcher(e.Launcher, e)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		p, err := l.Launch(ctx, launch.Spec{Server: "sleeper", Command: "sleep", Args: []string{"600"},
			Env: []string{"PATH=" + os.Getenv("PATH")}})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		go func() { _, _ = io.Copy(io.Discard, p.Stderr()) }()
		defer p.Kill()
		pids = append(pids, fmt.Sprint(p.Pid()))
	}
	var plugins []string
	for _, s := range h.Status() {
		if s.Pid != 0 {
			plugins = append(plugins, fmt.Sprint(s.Pid))
		}
	}
	fmt.Printf("pids %s\n", strings.Join(append(plugins, pids...), " "))
	// Wait for a signal the test never sends (SIGKILL cannot be caught):
	// a pending signal.Notify also keeps the runtime from calling the
	// idle process a deadlock. SIGALRM exists on every OS Go supports and
	// nothing here raises it.
	hold := make(chan os.Signal, 1)
	signal.Notify(hold, syscall.SIGALRM)
	<-hold
	return 0
}
