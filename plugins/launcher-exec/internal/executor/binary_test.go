package executor_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/internal/testwait"
	"github.com/toolgate/toolgate/plugins/launcher-exec/internal/executor"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/launcher"
	"github.com/toolgate/toolgate/sdk/plugintest"
)

// killPlugin ends the plugin process with SIGKILL: no chance to clean up.
func killPlugin(t testing.TB, b *plugintest.Binary) {
	t.Helper()
	pid := b.Client.ReattachConfig().Pid
	if err := procwatch.Kill(pid); err != nil {
		t.Fatalf("killing the plugin (pid %d): %v", pid, err)
	}
}

// TestPluginKilledMidCall kills the plugin while a call is in flight: the
// call fails at once with an error that says the launcher plugin exited,
// and the server it ran is gone.
func TestPluginKilledMidCall(t *testing.T) {
	b := binary(t, map[string]any{"executor": "local"})
	calls, stop, err := fifo(t)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	s := connect(t, b.Plugin.(*launcher.Client), launcher.Spec{
		Server: "demo", Command: demo(t), Args: []string{"--call-log", calls.path}, Env: baseEnv(nil),
	})
	server := s.remotePid(t)
	<-calls.lines // the pid call

	result := make(chan error, 1)
	go func() {
		_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 600_000}})
		result <- err
	}()
	if line := testwait.Recv(t, calls.lines, "the slow call in the call log"); !strings.Contains(line, `"tool":"slow"`) {
		t.Fatalf("call log line %q, want the slow call", line)
	}
	killPlugin(t, b)

	err = <-result
	if err == nil || !strings.Contains(err.Error(), sdk.ErrPluginExited.Error()) {
		t.Errorf("the call in flight ended with %v, want an error saying %q", err, sdk.ErrPluginExited)
	}
	if err := procwatch.WaitGone(t.Context(), server); err != nil {
		t.Errorf("server %d outlived its launcher plugin: %v", server, err)
	}
}

// TestNoOrphansAfterPluginSIGKILL runs several sessions through plugin
// processes under different executors, kills the plugins with SIGKILL, and
// checks by pid that no server they started is left.
func TestNoOrphansAfterPluginSIGKILL(t *testing.T) {
	configs := []map[string]any{
		{"executor": "local"},
		{"executor": "custom", "prefix": []string{"sh", "-c", "{{script}}"}},
		{"executor": "custom", "prefix": []string{"env", "{{env}}", "{{command}}", "{{args}}"}},
	}
	var servers []int
	var plugins []*plugintest.Binary
	for _, cfg := range configs {
		b := binary(t, cfg)
		plugins = append(plugins, b)
		for range 2 {
			s := connect(t, b.Plugin.(*launcher.Client), launcher.Spec{Server: "demo", Command: demo(t), Env: baseEnv(nil)})
			servers = append(servers, s.remotePid(t))
		}
	}
	for _, b := range plugins {
		killPlugin(t, b)
	}
	for _, pid := range servers {
		if err := procwatch.WaitGone(t.Context(), pid); err != nil {
			t.Errorf("server %d outlived its launcher plugin: %v", pid, err)
		}
	}
}

// TestBinaryDescribesItselfAndRefusesBadConfig talks to the real binary
// the way the host does before any launch: Info, then Configure.
func TestBinaryDescribesItselfAndRefusesBadConfig(t *testing.T) {
	c := plugintest.RunBinary(t, testbin.Path(t, pluginBinary), sdk.KindLauncher).(*launcher.Client)
	info, err := c.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != executor.Name || info.Kind != sdk.KindLauncher || !info.Has(sdk.CapabilityConfigure) || info.ConfigSchema == nil {
		t.Fatalf("Info = %+v", info)
	}
	var attrs []string
	for _, a := range info.ConfigSchema.Attributes {
		attrs = append(attrs, a.Name)
	}
	for _, want := range []string{"executor", "sandbox_prefix", "host", "port", "identity_file", "container", "pod", "alloc", "prefix"} {
		if !slices.Contains(attrs, want) {
			t.Errorf("config schema attributes %v lack %q", attrs, want)
		}
	}

	diags, err := c.Configure(t.Context(), json.RawMessage(`{"executor":"sssh"}`))
	if err != nil || !sdk.HasErrors(diags) || !strings.Contains(diags[0].Detail, `Did you mean "ssh"?`) {
		t.Errorf("Configure(executor = sssh) = %v, %v; want an error suggesting ssh", diags, err)
	}
	// A launch before a successful Configure cannot run anything.
	if _, err := c.Launch(t.Context(), launcher.Spec{Command: "true"}); err == nil || !strings.Contains(err.Error(), sdk.ErrNotConfigured.Error()) {
		t.Errorf("Launch before Configure = %v, want %q", err, sdk.ErrNotConfigured)
	}
}

// callLog is mcp-demo's --call-log as a stream of lines.
type callLog struct {
	path  string
	lines <-chan string
}

func fifo(t testing.TB) (callLog, func(), error) {
	path, lines, stop, err := procwatch.LineFIFO(t.TempDir())
	return callLog{path: path, lines: lines}, stop, err
}
