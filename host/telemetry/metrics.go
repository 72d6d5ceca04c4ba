package telemetry

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/toolgate/toolgate/host/events"
)

// Metric names, stable: dashboards and alerts use them.
const (
	MetricCalls            = "toolgate_tool_calls_total"
	MetricCallDuration     = "toolgate_tool_call_duration_seconds"
	MetricApprovals        = "toolgate_approval_decisions_total"
	MetricServerUp         = "toolgate_server_up"
	MetricServerRestarts   = "toolgate_server_restarts_total"
	MetricPluginRestarts   = "toolgate_plugin_restarts_total"
	MetricPluginExits      = "toolgate_plugin_exits_total"
	MetricSessions         = "toolgate_sessions"
	labelServer, labelTool = "server", "tool"
)

// MetricsOptions configures NewMetrics. Every field is optional.
type MetricsOptions struct {
	// Sessions returns the number of open upstream sessions; nil leaves
	// the toolgate_sessions gauge out.
	Sessions func() int
}

// Metrics is an events.Sink that counts what the host does, and the
// Prometheus registry that exposes it. Register it with Bus.AddSink
// before the host starts servers, so that their startup is counted.
type Metrics struct {
	reg *prometheus.Registry

	calls     *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	approvals *prometheus.CounterVec
	serverUp  *prometheus.GaugeVec
	restarts  *prometheus.CounterVec
	pRestarts *prometheus.CounterVec
	pExits    *prometheus.CounterVec

	mu sync.Mutex
	// serverRestarts is the last restart count reported per server, so
	// the counter grows by the difference (a reload may reset it).
	serverRestarts map[string]int
	// pluginStarted records plugins that started once: a later start is
	// a restart.
	pluginStarted map[string]bool
}

// NewMetrics returns a Metrics with its own registry (not the global
// one: two hosts in one process, as in tests, must not collide), which
// also carries the Go runtime and process collectors.
func NewMetrics(opts MetricsOptions) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricCalls,
			Help: "Tool calls that ended, by server, tool and outcome (completed, failed, denied).",
		}, []string{labelServer, labelTool, "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: MetricCallDuration,
			Help: "Time from a call entering toolgate to its end, approval included, by server, tool and outcome.",
			// From a fast local tool to a human answering a form.
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
		}, []string{labelServer, labelTool, "outcome"}),
		approvals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricApprovals,
			Help: "Approval verdicts by the step that gave them (mode, annotations, session, hook, guardian, user, ...) and verdict.",
		}, []string{"step", "verdict"}),
		serverUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricServerUp,
			Help: "1 while the MCP server is ready to take calls, 0 otherwise.",
		}, []string{labelServer}),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricServerRestarts,
			Help: "Restarts of MCP servers after they crashed.",
		}, []string{labelServer}),
		pRestarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricPluginRestarts,
			Help: "Plugin processes started again after their first start.",
		}, []string{"plugin", "kind"}),
		pExits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricPluginExits,
			Help: "Plugin processes that exited, failed or were given up on, by status.",
		}, []string{"plugin", "kind", "status"}),
		serverRestarts: map[string]int{},
		pluginStarted:  map[string]bool{},
	}
	m.reg.MustRegister(m.calls, m.duration, m.approvals, m.serverUp, m.restarts, m.pRestarts, m.pExits,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if opts.Sessions != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: MetricSessions,
			Help: "Open upstream MCP sessions (HTTP and stdio) on this replica.",
		}, func() float64 { return float64(opts.Sessions()) }))
	}
	return m
}

// Registry is what the /metrics handler gathers from. Callers may
// register collectors of their own on it.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Emit updates the metrics an event concerns.
func (m *Metrics) Emit(e events.Event) {
	switch e := e.(type) {
	case events.ToolCallEnd:
		tool := e.Tool
		if m := e.Method(); m != "tools/call" {
			tool = m
		}
		m.calls.WithLabelValues(e.Server, tool, e.Status).Inc()
		m.duration.WithLabelValues(e.Server, tool, e.Status).Observe(e.Duration.Seconds())
	case events.ApprovalDecision:
		m.approvals.WithLabelValues(e.Step, e.Verdict).Inc()
	case events.ServerStartup:
		m.serverUp.WithLabelValues(e.Server).Set(up(e.Status == events.StatusReady))
	case events.ServerState:
		if e.Status == "closed" {
			// A removed server leaves no stale series behind.
			m.serverUp.DeleteLabelValues(e.Server)
			m.mu.Lock()
			delete(m.serverRestarts, e.Server)
			m.mu.Unlock()
			return
		}
		m.serverUp.WithLabelValues(e.Server).Set(up(e.Status == events.StatusReady))
		m.mu.Lock()
		if d := e.Restarts - m.serverRestarts[e.Server]; d > 0 {
			m.restarts.WithLabelValues(e.Server).Add(float64(d))
		}
		if e.Restarts > 0 {
			m.serverRestarts[e.Server] = e.Restarts
		}
		m.mu.Unlock()
	case events.PluginState:
		switch e.Status {
		case events.PluginStarted:
			m.mu.Lock()
			again := m.pluginStarted[e.Plugin]
			m.pluginStarted[e.Plugin] = true
			m.mu.Unlock()
			if again {
				m.pRestarts.WithLabelValues(e.Plugin, e.PluginKind).Inc()
			}
		default:
			m.pExits.WithLabelValues(e.Plugin, e.PluginKind, e.Status).Inc()
		}
	}
}

func up(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
