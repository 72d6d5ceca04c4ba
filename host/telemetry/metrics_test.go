package telemetry_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/telemetry"
)

// TestRestartsAreCountedOnce: a server's restart count arrives as a
// running total on each state event, and a plugin's restarts as repeated
// starts; neither may be counted twice.
func TestRestartsAreCountedOnce(t *testing.T) {
	m := telemetry.NewMetrics(telemetry.MetricsOptions{})
	for _, e := range []events.Event{
		events.ServerStartup{Server: "s", Status: events.StatusReady},
		events.ServerState{Server: "s", Status: events.StatusFailed, Restarts: 0},
		events.ServerState{Server: "s", Status: events.StatusReady, Restarts: 1},
		events.ServerState{Server: "s", Status: events.StatusReady, Restarts: 1}, // tools changed
		events.ServerState{Server: "s", Status: events.StatusFailed, Restarts: 1},
		events.ServerState{Server: "s", Status: events.StatusReady, Restarts: 2},
		events.PluginState{Plugin: "p", PluginKind: "hook", Status: events.PluginStarted},
		events.PluginState{Plugin: "p", PluginKind: "hook", Status: events.PluginExited},
		events.PluginState{Plugin: "p", PluginKind: "hook", Status: events.PluginStarted},
	} {
		m.Emit(e)
	}
	want := `
# HELP toolgate_plugin_restarts_total Plugin processes started again after their first start.
# TYPE toolgate_plugin_restarts_total counter
toolgate_plugin_restarts_total{kind="hook",plugin="p"} 1
# HELP toolgate_server_restarts_total Restarts of MCP servers after they crashed.
# TYPE toolgate_server_restarts_total counter
toolgate_server_restarts_total{server="s"} 2
# HELP toolgate_server_up 1 while the MCP server is ready to take calls, 0 otherwise.
# TYPE toolgate_server_up gauge
toolgate_server_up{server="s"} 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want),
		telemetry.MetricServerRestarts, telemetry.MetricPluginRestarts, telemetry.MetricServerUp); err != nil {
		t.Error(err)
	}

	// A removed server leaves no series behind.
	m.Emit(events.ServerState{Server: "s", Status: "closed"})
	if n := testutil.CollectAndCount(m.Registry(), telemetry.MetricServerUp); n != 0 {
		t.Errorf("%d toolgate_server_up series after the server was removed, want 0", n)
	}
}

// TestReadyzSaysWhy: /readyz answers 200 "ready" while ready, and 503
// with the reason while not; /healthz answers 200 whatever readiness says.
func TestReadyzSaysWhy(t *testing.T) {
	m := telemetry.NewMetrics(telemetry.MetricsOptions{})
	why := error(nil)
	srv := httptest.NewServer(telemetry.OpsHandler(m, func() error { return why }))
	defer srv.Close()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	if code, body := get(telemetry.PathReadyz); code != http.StatusOK || body != "ready\n" {
		t.Errorf("/readyz while ready = %d %q, want 200 \"ready\"", code, body)
	}
	why = errors.New(`required MCP server "vital" is not ready`)
	if code, body := get(telemetry.PathReadyz); code != http.StatusServiceUnavailable ||
		body != "not ready: required MCP server \"vital\" is not ready\n" {
		t.Errorf("/readyz while not ready = %d %q, want 503 naming the reason", code, body)
	}
	if code, body := get(telemetry.PathHealthz); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz = %d %q, want 200 \"ok\" whatever readiness says", code, body)
	}
}
