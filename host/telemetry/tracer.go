package telemetry

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/host/events"
)

// TracerName is the instrumentation scope of toolgate's spans.
const TracerName = "github.com/toolgate/toolgate"

// Tracer is an events.Sink that turns each tool call into a trace: a
// "tools/call" span from the call entering toolgate to its end, with one
// child span per approval step (from the previous step's verdict to this
// one's) and one for the downstream call (from the last verdict to the
// end). A traceparent the client sent makes the call span a child of the
// client's span. Spans are built from event timestamps, so they say
// exactly what the audit log says.
type Tracer struct {
	tracer trace.Tracer
	prop   propagation.TraceContext

	mu    sync.Mutex
	calls map[string]*callSpan // by call id
}

type callSpan struct {
	ctx  context.Context // carries the call span
	span trace.Span
	mark time.Time // end of the last child span
	// approved is set once a step approved the call: what follows is the
	// downstream call.
	approved bool
}

// NewTracer returns a Tracer that starts spans with tp's tracer.
func NewTracer(tp trace.TracerProvider) *Tracer {
	return &Tracer{tracer: tp.Tracer(TracerName), calls: map[string]*callSpan{}}
}

// Emit records the span work an event concerns.
func (t *Tracer) Emit(e events.Event) {
	switch e := e.(type) {
	case events.ToolCallBegin:
		ctx := context.Background()
		if e.TraceParent != "" {
			ctx = t.prop.Extract(ctx, propagation.MapCarrier{"traceparent": e.TraceParent})
		}
		ctx, span := t.tracer.Start(ctx, e.Method()+" "+e.ModelName,
			trace.WithTimestamp(e.At), trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(callAttributes(e.Call)...))
		t.mu.Lock()
		t.calls[e.CallID] = &callSpan{ctx: ctx, span: span, mark: e.At}
		t.mu.Unlock()
	case events.ApprovalDecision:
		t.mu.Lock()
		c := t.calls[e.CallID]
		if c == nil {
			t.mu.Unlock()
			return
		}
		start := c.mark
		c.mark = e.At
		if e.Verdict == events.VerdictApproved {
			c.approved = true
		}
		t.mu.Unlock()
		_, span := t.tracer.Start(c.ctx, "approval "+e.Step, trace.WithTimestamp(start),
			trace.WithAttributes(
				attribute.String("toolgate.approval.step", e.Step),
				attribute.String("toolgate.approval.by", e.By),
				attribute.String("toolgate.approval.verdict", e.Verdict)))
		span.End(trace.WithTimestamp(e.At))
	case events.ToolCallEnd:
		t.mu.Lock()
		c := t.calls[e.CallID]
		delete(t.calls, e.CallID)
		t.mu.Unlock()
		if c == nil {
			return
		}
		end := e.At
		if e.Status != events.CallDenied && c.approved {
			_, span := t.tracer.Start(c.ctx, "downstream "+e.Server+"/"+e.Tool, trace.WithTimestamp(c.mark),
				trace.WithSpanKind(trace.SpanKindClient),
				trace.WithAttributes(attribute.String("toolgate.server", e.Server), attribute.String("toolgate.tool", e.Tool)))
			if e.Status == events.CallFailed {
				span.SetStatus(codes.Error, "the call failed")
			}
			span.End(trace.WithTimestamp(end))
		}
		c.span.SetAttributes(attribute.String("toolgate.outcome", e.Status))
		if e.Status == events.CallFailed {
			// The error text may quote the server; the audit log has it.
			c.span.SetStatus(codes.Error, "the call failed")
		}
		c.span.End(trace.WithTimestamp(end))
	}
}

// Pending is the number of calls whose span is still open.
func (t *Tracer) Pending() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.calls)
}

func callAttributes(c events.Call) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.String("toolgate.call_id", c.CallID),
		attribute.String("toolgate.session_id", c.SessionID),
		attribute.String("toolgate.server", c.Server),
		attribute.String("toolgate.tool", c.Tool),
		attribute.String("mcp.method.name", "tools/call"),
	}
}
