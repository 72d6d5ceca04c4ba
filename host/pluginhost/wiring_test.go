package pluginhost_test

import (
	"fmt"
	"testing"

	"github.com/toolgate/toolgate/host"
	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/pluginhost"
	"github.com/toolgate/toolgate/internal/testbin"
)

// TestHostRunsConfiguredPlugins checks the composition root: hook blocks
// take part in approval, launcher blocks start servers, a reload swaps
// them, and Close stops every plugin process.
func TestHostRunsConfiguredPlugins(t *testing.T) {
	t.Parallel()
	const tmpl = `
%s
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
`
	demo := testbin.Path(t, "mcp-demo")
	withHook := loadConfig(t, fmt.Sprintf(tmpl, fmt.Sprintf(`plugin "deny" {
  kind = "hook"
  path = %q
}`, bin("hook-deny")), bin("launcher-local"), demo))
	withoutHook := loadConfig(t, fmt.Sprintf(tmpl, "", bin("launcher-local"), demo))

	rec := newRecorder()
	ask := &asker{}
	h, err := host.New(withHook, host.Options{Logger: testLogger(t, 0), Sinks: []events.Sink{rec}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	h.Start(t.Context())
	if _, err := h.Manager.WaitStartup(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st := h.Manager.Status()[0]; st.Status != "ready" || st.Launcher != "exec" {
		t.Fatalf("server over the launcher plugin: %+v", st)
	}

	d := h.Approval().Decide(t.Context(), request)
	if d.Approved || d.By != "deny" || d.Text != "denied by hook-deny" {
		t.Errorf("decision with the hook block = %+v", d)
	}

	// A reload without the hook block: the hook process stops, the
	// launcher (unchanged) keeps serving, and approval falls to the user.
	h.Apply(withoutHook)
	rec.wait(t, func(e events.PluginState) bool { return e.Plugin == "deny" && e.Status == events.PluginExited })
	asked := request
	asked.Asker = ask // the session's asker travels on the request
	if d := h.Approval().Decide(t.Context(), asked); d.Step != approval.StepUser || ask.count() != 1 {
		t.Errorf("decision after removing the hook = %+v", d)
	}
	if st := h.Manager.Status()[0]; st.Status != "ready" {
		t.Errorf("server after the reload: %+v", st)
	}

	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	for _, s := range h.Plugins().Status() {
		if s.Health == pluginhost.HealthRunning {
			t.Errorf("plugin still running after Close: %+v", s)
		}
	}
	if got := rec.statuses("exec@viaplugin"); len(got) != 2 || got[1] != events.PluginExited {
		t.Errorf("launcher events = %v, want started then exited at Close", got)
	}
}
