package events

import "context"

// traceParentKey carries a call's W3C traceparent through the context of
// the call, from the front end that received it to the step that emits
// ToolCallBegin. The host stays free of any tracing library: it only
// passes the header value along.
type traceParentKey struct{}

// WithTraceParent returns ctx carrying tp, a W3C traceparent header
// value. An empty tp returns ctx unchanged.
func WithTraceParent(ctx context.Context, tp string) context.Context {
	if tp == "" {
		return ctx
	}
	return context.WithValue(ctx, traceParentKey{}, tp)
}

// TraceParent returns the traceparent WithTraceParent put in ctx, or "".
func TraceParent(ctx context.Context) string {
	tp, _ := ctx.Value(traceParentKey{}).(string)
	return tp
}
