package telemetry

import (
	"context"
	"fmt"
	"net/url"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// NewOTLPProvider returns a tracer provider that batches spans to the
// OTLP/HTTP collector at endpoint (such as "http://otel-collector:4318";
// spans go to its /v1/traces unless the URL has a path). Shut it down to
// flush the last spans. The usual OTEL_EXPORTER_OTLP_* variables (headers,
// timeouts, certificates) still apply.
func NewOTLPProvider(ctx context.Context, endpoint, version string) (*sdktrace.TracerProvider, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("tracing: otlp_endpoint %q: %w", endpoint, err)
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpoint(u.Host)}
	if u.Scheme == "http" {
		opts = append(opts, otlptracehttp.WithInsecure())
	}
	if u.Path != "" && u.Path != "/" {
		opts = append(opts, otlptracehttp.WithURLPath(u.Path))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter for %s: %w", endpoint, err)
	}
	res := resource.NewSchemaless(
		attribute.String("service.name", "toolgate"),
		attribute.String("service.version", version))
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}
