package config

import (
	"net"
	"net/url"
	"strconv"
	"time"
)

// DefaultDrainGrace is how long SIGTERM lets calls in flight finish when
// serve { drain_grace } is not set. Kubernetes gives a pod 30s between
// SIGTERM and SIGKILL by default; draining must end well before that so
// that servers and plugins still stop cleanly.
const DefaultDrainGrace = 20 * time.Second

// DefaultInitialListWait is how long a session's first list waits for
// servers still starting when serve { initial_list_wait } is not set.
// Clients that list once and ignore list_changed (Codex never re-lists
// tools; Claude Code never re-lists resources or prompts) would lose a
// slow server for the whole session, so the first list waits until every
// server settled — it answers as soon as they have — bounded below the
// shortest startup limit of the clients people use: Codex gives a server
// 10 s by default (startup_timeout_sec) for its process start, handshake
// and first tools/list, and toolgate itself needs some of that to start.
const DefaultInitialListWait = 8 * time.Second

// serveOps reads the operations settings of the serve block: the
// metrics listener, OTLP tracing and the drain grace period.
func (d *decoder) serveOps(o *ServeOps, r *rawServe) {
	if v, ok := d.duration(r.DrainGrace); ok {
		o.DrainGrace = v
	}
	if m := r.Metrics; m != nil {
		if v, ok := d.nonEmptyString(m.Listen); ok {
			_, port, err := net.SplitHostPort(v)
			if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
				d.errorf(m.Listen.Range, "Invalid metrics listen address",
					"metrics { listen } must be host:port, such as \"127.0.0.1:9464\" (or \"0.0.0.0:9464\" inside a container).")
			} else {
				o.MetricsListen = v
			}
		} else if m.Listen == nil {
			d.errorf(m.DeclRange, "Missing metrics listen address",
				"A metrics block needs listen = \"host:port\", such as \"127.0.0.1:9464\".")
		}
	}
	if t := r.Tracing; t != nil {
		if v, ok := d.nonEmptyString(t.OTLPEndpoint); ok {
			u, err := url.Parse(v)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				d.errorf(t.OTLPEndpoint.Range, "Invalid OTLP endpoint",
					"otlp_endpoint must be the http:// or https:// URL of an OTLP/HTTP collector, such as \"http://otel-collector:4318\".")
			} else {
				o.OTLPEndpoint = v
			}
		} else if t.OTLPEndpoint == nil {
			d.errorf(t.DeclRange, "Missing OTLP endpoint",
				"A tracing block needs otlp_endpoint = \"http://collector:4318\" (OTLP over HTTP).")
		}
	}
}
