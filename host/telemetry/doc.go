// Package telemetry turns the host's event stream into what operators
// watch: Prometheus metrics (Metrics), OpenTelemetry traces of tool calls
// (Tracer), and the operations HTTP handler that serves /metrics,
// /healthz and /readyz (OpsHandler).
//
// It owns the metric and span names and the mapping from events to them.
// It reads events only: it must not reach into the approval procedure,
// the manager or the gateway to count things, so that what a metric or a
// span says is exactly what the audit log says. The few values that are
// states rather than events (open sessions, readiness) are read through
// functions its caller passes in.
//
// Nothing here writes the audit log, changes a decision or blocks a call:
// sinks do constant work per event under one small lock.
package telemetry
