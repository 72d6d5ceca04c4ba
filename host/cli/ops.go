package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/telemetry"
	"github.com/toolgate/toolgate/host/version"
)

// opsTelemetry is what toolgate serve runs for operators: the metrics
// listener (/metrics, /healthz, /readyz) and the OTLP trace exporter.
type opsTelemetry struct {
	// sinks feed metrics and traces from the host's events.
	sinks []events.Sink
	srv   *http.Server
	errc  chan error
	tp    *sdktrace.TracerProvider
}

// startOps starts the operations listener at addr (the --metrics flag;
// "" means serve { metrics { listen } }, none when both are empty) and
// the trace exporter when serve { tracing } is set. It runs before the
// servers start, so that /healthz answers and /readyz says "starting"
// while they do.
func (g *globals) startOps(ctx context.Context, ops config.ServeOps, addr string, gw probes) (*opsTelemetry, error) {
	o := &opsTelemetry{}
	if addr == "" {
		addr = ops.MetricsListen
	}
	if addr != "" {
		m := telemetry.NewMetrics(telemetry.MetricsOptions{Sessions: gw.Sessions})
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, exit(ExitFailure, fmt.Errorf("metrics listener on %s: %w (pick another port with --metrics or serve { metrics { listen } })", addr, err))
		}
		o.sinks = append(o.sinks, m)
		o.srv = &http.Server{Handler: telemetry.OpsHandler(m, gw.Ready), ReadHeaderTimeout: 10 * time.Second}
		o.errc = make(chan error, 1)
		go func() { o.errc <- o.srv.Serve(ln) }()
		fmt.Fprintf(g.io.Err, "toolgate: metrics at http://%s%s, probes at %s and %s\n", ln.Addr(), telemetry.PathMetrics, telemetry.PathHealthz, telemetry.PathReadyz)
	}
	if ops.OTLPEndpoint != "" {
		tp, err := telemetry.NewOTLPProvider(ctx, ops.OTLPEndpoint, version.Toolgate)
		if err != nil {
			o.stop()
			return nil, exit(ExitFailure, err)
		}
		o.tp = tp
		o.sinks = append(o.sinks, telemetry.NewTracer(tp))
	}
	return o, nil
}

// stop flushes the last spans and closes the listener; it runs after the
// servers stopped, so /readyz reports the drain until the end.
func (o *opsTelemetry) stop() {
	if o.tp != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = o.tp.Shutdown(ctx) // a collector that is down loses the last spans
		cancel()
	}
	if o.srv != nil {
		_ = o.srv.Close()
		<-o.errc // http.ErrServerClosed: Serve has returned
	}
}
