package pluginhost_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/environment"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/launch"
	"github.com/toolgate/toolgate/host/manager"
	"github.com/toolgate/toolgate/host/mcpclient"
	"github.com/toolgate/toolgate/host/pluginhost"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/launcher"
)

// startManager runs a real connection manager over cfg, with launcher
// plugins served by h.
func startManager(t testing.TB, cfg *config.Config, h *pluginhost.Plugins) *manager.Manager {
	t.Helper()
	m := manager.New(cfg, manager.Options{
		Logger: testLogger(t, 0),
		Events: &events.Recorder{},
		Environments: environment.New(cfg, environment.Options{
			Local:  launch.NewLocal(launch.LocalOptions{}),
			Plugin: h.Launcher,
		}),
		Restart: manager.RestartPolicy{Disabled: true},
	})
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("closing manager: %v", err)
		}
	})
	m.Start(context.Background())
	if _, err := m.WaitStartup(t.Context()); err != nil {
		t.Fatal(err)
	}
	return m
}

func textOf(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("unexpected result: isError=%v, %d blocks", res.IsError, len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T", res.Content[0])
	}
	return tc.Text
}

// TestLauncherPluginCarriesAnMCPSession runs mcp-demo in an environment
// served by the launcher-local plugin, through a real manager: list,
// call, and a 4 MiB result.
func TestLauncherPluginCarriesAnMCPSession(t *testing.T) {
	t.Parallel()
	cfg := loadConfig(t, fmt.Sprintf(`
plugin "exec" {
  kind = "launcher"
  path = %q
}
environment "viaplugin" {
  launcher = "exec"
}
server "demo" {
  command     = %q
  environment = "viaplugin"
  required    = true
}
`, bin("launcher-local"), testbin.Path(t, "mcp-demo")))
	h, rec := newHost(t, cfg, pluginhost.Options{})
	m := startManager(t, cfg, h)

	st := m.Status()[0]
	if st.Status != "ready" || st.Launcher != "exec" {
		t.Fatalf("server status = %+v", st)
	}
	var tools []string
	for _, ti := range m.Snapshot().Tools {
		tools = append(tools, ti.Tool.Name)
	}
	if !slices.Contains(tools, "echo") || !slices.Contains(tools, "echo_big") {
		t.Fatalf("tools = %v", tools)
	}

	res, err := m.CallTool(t.Context(), "demo", "echo", map[string]any{"text": "hello"}, nil, mcpclient.CallOptions{})
	if err != nil || textOf(t, res) != "hello" {
		t.Fatalf("echo: %v", err)
	}
	big := strings.Repeat("0123456789abcdef", 4<<20/16)
	res, err = m.CallTool(t.Context(), "demo", "echo_big", map[string]any{"data": big}, nil, mcpclient.CallOptions{})
	if err != nil {
		t.Fatalf("echo_big: %v", err)
	}
	if got := textOf(t, res); got != big {
		t.Fatalf("echo_big returned %d bytes, want the same %d", len(got), len(big))
	}

	ps := h.Status()
	i := slices.IndexFunc(ps, func(s pluginhost.Status) bool { return s.Environment == "viaplugin" })
	if i < 0 || ps[i].Health != pluginhost.HealthRunning || ps[i].PluginName != "launcher-local" {
		t.Errorf("plugin status = %+v", ps)
	}
	if got := rec.statuses("exec@viaplugin"); !slices.Equal(got, []string{events.PluginStarted}) {
		t.Errorf("events = %v", got)
	}
}

// TestLauncherDiesMidStream: the launcher-dies plugin exits as soon as
// the host writes to its process. Reads fail with sdk.ErrPluginExited,
// the server fails with a clear error, and the next launch gets a fresh
// plugin process.
func TestLauncherDiesMidStream(t *testing.T) {
	t.Parallel()
	cfg := loadConfig(t, fmt.Sprintf(`
plugin "dies" {
  kind = "launcher"
  path = %q
}
environment "doomed" {
  launcher = "dies"
}
`, bin("launcher-dies")))
	h, rec := newHost(t, cfg, pluginhost.Options{Launcher: launcherGraces})
	env, _ := cfg.Environment("doomed")
	l, err := h.Launcher("dies", env)
	if err != nil {
		t.Fatal(err)
	}
	p, err := l.Launch(t.Context(), launch.Spec{Server: "s", Command: "whatever"})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, p.Stderr()) }()
	defer p.Close()
	out := bufio.NewReader(p)
	line, err := out.ReadString('\n')
	if err != nil || line != "partial output before the launcher dies\n" {
		t.Fatalf("first line = %q, %v", line, err)
	}
	_, _ = p.Write([]byte("{}\n")) // the plugin dies now
	_, err = io.ReadAll(out)
	if !errors.Is(err, sdk.ErrPluginExited) {
		t.Fatalf("read after the plugin died: %v, want sdk.ErrPluginExited", err)
	}
	if err := p.Wait(t.Context()); !errors.Is(err, sdk.ErrPluginExited) {
		t.Errorf("Wait = %v, want sdk.ErrPluginExited", err)
	}
	exited := rec.wait(t, func(e events.PluginState) bool { return e.Status == events.PluginExited })
	if exited.Plugin != "dies@doomed" || exited.Error != "exit status 3" {
		t.Errorf("exited event = %+v", exited)
	}

	// The next launch starts a fresh plugin process.
	p2, err := l.Launch(t.Context(), launch.Spec{Server: "s", Command: "whatever"})
	if err != nil {
		t.Fatalf("launch after the crash: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, p2.Stderr()) }()
	if line, err := bufio.NewReader(p2).ReadString('\n'); err != nil || !strings.HasPrefix(line, "partial output") {
		t.Errorf("second process: %q, %v", line, err)
	}
	p2.Kill()
	if st := h.Status(); st[len(st)-1].Starts != 2 {
		t.Errorf("status = %+v, want 2 starts", st[len(st)-1])
	}
}

func TestLauncherDyingDuringInitializeFailsTheServer(t *testing.T) {
	t.Parallel()
	cfg := loadConfig(t, fmt.Sprintf(`
plugin "dies" {
  kind = "launcher"
  path = %q
}
environment "doomed" {
  launcher = "dies"
}
server "demo" {
  command     = "mcp-demo"
  environment = "doomed"
  startup_timeout_sec = 20
}
`, bin("launcher-dies")))
	h, _ := newHost(t, cfg, pluginhost.Options{Launcher: launcherGraces})
	m := startManager(t, cfg, h)
	st := m.Status()[0]
	if st.Status != "failed" || !strings.Contains(st.Error, "plugin process exited") {
		t.Errorf("server status = %+v, want failed naming the plugin's exit", st)
	}
}

func TestLauncherErrorsMatchLaunchErrStart(t *testing.T) {
	t.Parallel()
	cfg := loadConfig(t, fmt.Sprintf(`
plugin "exec" {
  kind = "launcher"
  path = %q
}
plugin "broken" {
  kind   = "launcher"
  path   = %q
  sha256 = %q
}
`, bin("launcher-local"), bin("launcher-local"), strings.Repeat("1", 64)))
	h, _ := newHost(t, cfg, pluginhost.Options{})
	env := config.Environment{Name: "e"}
	ok, err := h.Launcher("exec", env)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ok.Launch(t.Context(), launch.Spec{Server: "s", Command: "/no/such/program"})
	if !errors.Is(err, launch.ErrStart) || !strings.Contains(err.Error(), "/no/such/program") {
		t.Errorf("missing command: %v, want launch.ErrStart naming it", err)
	}
	bad, err := h.Launcher("broken", env)
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.Launch(t.Context(), launch.Spec{Server: "s", Command: "true"})
	if !errors.Is(err, launch.ErrStart) || !errors.Is(err, pluginhost.ErrChecksumMismatch) {
		t.Errorf("refused plugin: %v, want launch.ErrStart and ErrChecksumMismatch", err)
	}
	if _, err := h.Launcher("nope", env); !errors.Is(err, pluginhost.ErrUnknownPlugin) {
		t.Errorf("unknown plugin: %v", err)
	}
}

var launcherGraces = launcherOptions(200 * time.Millisecond)

func launcherOptions(grace time.Duration) launcher.ClientOptions {
	return launcher.ClientOptions{StdinGrace: grace, TermGrace: grace, KillGrace: grace}
}
