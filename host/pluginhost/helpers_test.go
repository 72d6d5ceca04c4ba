package pluginhost_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/pluginhost"
)

// loadConfig writes src to a config file and loads it.
func loadConfig(t testing.TB, src string) *config.Config {
	t.Helper()
	return loadConfigEnv(t, src, nil)
}

func loadConfigEnv(t testing.TB, src string, env map[string]string) *config.Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), "toolgate.hcl")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load(path, config.LoadOptions{LookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}})
	if diags.HasErrors() {
		t.Fatalf("loading config: %s\n%s", diags.Error(), src)
	}
	return cfg
}

// recorder keeps plugin events and lets a test wait for one.
type recorder struct {
	mu     sync.Mutex
	events []events.PluginState
	notify chan struct{}
}

func newRecorder() *recorder { return &recorder{notify: make(chan struct{}, 1)} }

func (r *recorder) Emit(e events.Event) {
	ps, ok := e.(events.PluginState)
	if !ok {
		return
	}
	r.mu.Lock()
	r.events = append(r.events, ps)
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

func (r *recorder) all() []events.PluginState {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]events.PluginState(nil), r.events...)
}

// statuses lists the Status field of every event of plugin, in order.
func (r *recorder) statuses(plugin string) []string {
	var out []string
	for _, e := range r.all() {
		if e.Plugin == plugin {
			out = append(out, e.Status)
		}
	}
	return out
}

// wait blocks until an event satisfies ok.
func (r *recorder) wait(t testing.TB, ok func(events.PluginState) bool) events.PluginState {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		for _, e := range r.all() {
			if ok(e) {
				return e
			}
		}
		select {
		case <-r.notify:
		case <-deadline.C:
			t.Fatalf("no matching plugin event; got %+v", r.all())
		}
	}
}

// newHost builds a plugin host for cfg whose logs go to the test log.
func newHost(t testing.TB, cfg *config.Config, opts pluginhost.Options) (*pluginhost.Plugins, *recorder) {
	t.Helper()
	rec := newRecorder()
	if opts.Events == nil {
		opts.Events = rec
	}
	if opts.Logger == nil {
		opts.Logger = testLogger(t, hclog.Debug)
	}
	h := pluginhost.New(cfg, opts)
	t.Cleanup(func() { _ = h.Close() })
	return h, rec
}

func testLogger(t testing.TB, level hclog.Level) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "toolgate", Level: level, Output: logWriter{t}})
}

type logWriter struct{ t testing.TB }

func (w logWriter) Write(b []byte) (int, error) {
	w.t.Logf("%s", b)
	return len(b), nil
}

// hookNamed returns the adapter of the hook block name.
func hookNamed(t testing.TB, h *pluginhost.Plugins, name string) *pluginhost.Hook {
	t.Helper()
	for _, hk := range h.HookAdapters() {
		if hk.Name() == name {
			return hk
		}
	}
	t.Fatalf("no hook %q", name)
	return nil
}

// request is a call that needs approval (no annotations: maybe
// destructive).
var request = approval.Request{
	CallID: "c1", SessionID: "s1", Server: "files", Tool: "write_file",
	ModelName: "mcp__files__write_file", Arguments: []byte(`{"path":"a"}`),
}

// asker records whether the user step was reached, and declines.
type asker struct {
	mu    sync.Mutex
	asked int
}

func (a *asker) AskApproval(context.Context, approval.Prompt) (approval.Choice, error) {
	a.mu.Lock()
	a.asked++
	a.mu.Unlock()
	return approval.ChoiceDecline, nil
}

func (a *asker) Elicit(context.Context, approval.Elicitation) (*mcp.ElicitResult, error) {
	return nil, nil
}

func (a *asker) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.asked
}
