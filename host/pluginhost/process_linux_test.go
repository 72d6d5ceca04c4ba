//go:build linux

package pluginhost_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/host/pluginhost"
	"github.com/toolgate/toolgate/internal/contain"
	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/sdk"
)

// TestPluginEnvironmentIsBuiltExplicitly reads the plugin process's
// environment: only the few variables the host passes on, the log level,
// and go-plugin's handshake variables; nothing else of the host's.
func TestPluginEnvironmentIsBuiltExplicitly(t *testing.T) {
	t.Setenv("TOOLGATE_TEST_SECRET", "hunter2")
	t.Setenv("TOOLGATE_TEST_API_KEY", "given-on-purpose")
	cfg := loadConfig(t, fmt.Sprintf(`
plugin "allow" {
  kind     = "hook"
  path     = %q
  env_vars = ["TOOLGATE_TEST_API_KEY", "TOOLGATE_TEST_UNSET"]
}
`, bin("hook-allow")))
	h, _ := newHost(t, cfg, pluginhost.Options{Logger: testLogger(t, hclog.Warn)})
	if _, err := hookNamed(t, h, "allow").PermissionRequest(t.Context(), request); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", h.Status()[0].Pid))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range bytes.Split(bytes.TrimRight(raw, "\x00"), []byte{0}) {
		k, v, _ := strings.Cut(string(kv), "=")
		env[k] = v
	}
	if env["TOOLGATE_TEST_API_KEY"] != "given-on-purpose" {
		t.Errorf("a variable named in env_vars did not reach the plugin")
	}
	allowed := []string{"PATH", "HOME", "TMPDIR", "LANG", sdk.EnvLogLevel, "TOOLGATE_TEST_API_KEY",
		sdk.Handshake.MagicCookieKey, "PLUGIN_MIN_PORT", "PLUGIN_MAX_PORT", "PLUGIN_PROTOCOL_VERSIONS", "PLUGIN_CLIENT_CERT"}
	for k := range env {
		if !slices.Contains(allowed, k) {
			t.Errorf("plugin environment has %s, which the host must not pass on", k)
		}
	}
	if env[sdk.EnvLogLevel] != "warn" {
		t.Errorf("%s = %q, want the host logger's level (warn)", sdk.EnvLogLevel, env[sdk.EnvLogLevel])
	}
	if env["PATH"] != os.Getenv("PATH") {
		t.Errorf("PATH = %q, want the host's", env["PATH"])
	}
}

// TestPluginLogsUnderTheHostLogger checks that the plugin's own hclog
// lines (JSON on its stderr) come out of the host logger, named after
// the plugin block.
func TestPluginLogsUnderTheHostLogger(t *testing.T) {
	var mu sync.Mutex
	var buf bytes.Buffer
	log := hclog.New(&hclog.LoggerOptions{Name: "toolgate", Level: hclog.Debug, Output: lockedWriter{&mu, &buf}})
	cfg := loadConfig(t, fmt.Sprintf(`
plugin "allow" {
  kind = "hook"
  path = %q
}
`, bin("hook-allow")))
	h, _ := newHost(t, cfg, pluginhost.Options{Logger: log})
	if _, err := hookNamed(t, h, "allow").PermissionRequest(t.Context(), request); err != nil {
		t.Fatal(err)
	}
	_ = h.Close()
	mu.Lock()
	defer mu.Unlock()
	// go-plugin's server logs "plugin address" from inside the plugin.
	re := regexp.MustCompile(`\[DEBUG\] toolgate\.plugin\.allow\.hook-allow: plugin address`)
	if !re.Match(buf.Bytes()) {
		t.Errorf("no plugin log line under toolgate.plugin.allow; log:\n%s", buf.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// TestPluginsDieWithTheHost SIGKILLs a host process (this test binary in
// helper mode) that runs a hook plugin and a launcher plugin with a
// server process: none of them may survive it.
func TestPluginsDieWithTheHost(t *testing.T) {
	t.Parallel()
	cfg := fmt.Sprintf(`
plugin "allow" {
  kind = "hook"
  path = %q
}
plugin "exec" {
  kind = "launcher"
  path = %q
}
environment "viaplugin" {
  launcher = "exec"
}
`, bin("hook-allow"), bin("launcher-local"))
	path := t.TempDir() + "/toolgate.hcl"
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envHelper+"=hold", envHelperConfig+"="+path)
	cmd.Stderr = logWriter{t}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	line, err := procwatch.WaitLine(ctx, bufio.NewReader(out), regexp.MustCompile(`^pids (.*)$`))
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(line) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	if len(pids) != 3 { // hook plugin, launcher plugin, the launched sleep
		t.Fatalf("helper reported pids %v, want 3", pids)
	}
	for _, pid := range pids {
		if !procwatch.Alive(pid) {
			t.Fatalf("pid %d not running before the host is killed", pid)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for _, pid := range pids {
		if err := procwatch.WaitGone(ctx, pid); err != nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("process %d outlived the SIGKILLed host: %v", pid, err)
		}
	}
}

// TestPluginRunsInACgroupOfItsOwn: a plugin process is contained like a
// stdio server: in a cgroup of its own under the host's (so whatever it
// starts, even with setsid, ends with it), which is gone once the host
// has stopped the plugin.
func TestPluginRunsInACgroupOfItsOwn(t *testing.T) {
	if kind, why := contain.Default().Kind(); kind != contain.KindCgroup {
		testbin.SkipWithoutCgroup(t, "containment here is %s: %v", kind, why)
	}
	cfg := loadConfig(t, fmt.Sprintf(`
plugin "allow" {
  kind = "hook"
  path = %q
}
`, bin("hook-allow")))
	h, _ := newHost(t, cfg, pluginhost.Options{Logger: testLogger(t, hclog.Warn)})
	if _, err := hookNamed(t, h, "allow").PermissionRequest(t.Context(), request); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", h.Status()[0].Pid))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^0::(.*/toolgate-` + strconv.Itoa(os.Getpid()) + `/plugin-allow-\d+)$`).FindStringSubmatch(string(raw))
	if m == nil {
		t.Fatalf("plugin's cgroups:\n%s\nwant a cgroup toolgate-%d/plugin-allow-N", raw, os.Getpid())
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	// The cgroup directory, wherever cgroup2 is mounted, is gone.
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(mounts), "\n") {
		f := strings.Fields(line)
		if i := slices.Index(f, "-"); i > 4 && i+1 < len(f) && f[i+1] == "cgroup2" && f[3] == "/" {
			if _, err := os.Stat(f[4] + m[1]); !os.IsNotExist(err) {
				t.Errorf("the plugin's cgroup %s%s is still there after Close: %v", f[4], m[1], err)
			}
		}
	}
}
