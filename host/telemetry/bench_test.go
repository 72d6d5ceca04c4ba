package telemetry_test

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/telemetry"
)

// oneCall is the events of one approved, completed call.
func oneCall(i int) []events.Event {
	now := time.Now()
	c := events.Call{CallID: "call_" + string(rune('a'+i%26)), SessionID: "s", Server: "demo", Tool: "echo", ModelName: "mcp__demo__echo"}
	return []events.Event{
		events.ToolCallBegin{At: now, Call: c, Arguments: json.RawMessage(`{"text":"hi"}`),
			TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		events.ApprovalDecision{At: now, Call: c, Step: "annotations", By: "host", Verdict: events.VerdictApproved},
		events.ToolCallEnd{At: now, Call: c, Status: events.CallCompleted, Duration: time.Millisecond, Result: json.RawMessage(`{"content":[]}`)},
	}
}

// BenchmarkTelemetryPerCall reports what metrics and tracing add to each
// call as a ratio against the audit log's cost for the same events,
// measured in the same run: the audit log already handles every event.
//
//	go test -run '^$' -bench TelemetryPerCall ./host/telemetry/
func BenchmarkTelemetryPerCall(b *testing.B) {
	audit, err := events.OpenAudit(filepath.Join(b.TempDir(), "audit.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer audit.Close()
	m := telemetry.NewMetrics(telemetry.MetricsOptions{})
	// Batched to an exporter that drops them, as OTLP export batches.
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	defer func() { _ = tp.Shutdown(b.Context()) }()
	tr := telemetry.NewTracer(tp)
	calls := make([][]events.Event, 64)
	for i := range calls {
		calls[i] = oneCall(i)
	}
	measure := func(sinks ...events.Sink) time.Duration {
		start := time.Now()
		for i := range b.N {
			for _, e := range calls[i%len(calls)] {
				for _, s := range sinks {
					s.Emit(e)
				}
			}
		}
		return time.Since(start)
	}
	b.ResetTimer()
	base := measure(audit)
	metrics := measure(m)
	traces := measure(tr)
	b.StopTimer()
	b.ReportMetric(float64(base.Nanoseconds())/float64(b.N), "audit-ns/call")
	b.ReportMetric(float64(metrics.Nanoseconds())/float64(b.N), "metrics-ns/call")
	b.ReportMetric(float64(traces.Nanoseconds())/float64(b.N), "traces-ns/call")
	b.ReportMetric(float64(metrics)/float64(base), "metrics-ratio")
	b.ReportMetric(float64(traces)/float64(base), "traces-ratio")
}
