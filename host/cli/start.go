package cli

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/toolgate/toolgate/host"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
)

// startHost builds a host for cfg, starts every server and waits for the
// startup summary. With progress, each server's outcome is printed to
// stderr as it arrives. The caller closes the host.
func (g *globals) startHost(ctx context.Context, cfg *config.Config, progress bool, opts host.Options) (*host.Host, events.StartupComplete, error) {
	h, err := g.launchHost(ctx, cfg, progress, opts)
	if err != nil {
		return nil, events.StartupComplete{}, err
	}
	sum, err := h.Manager.WaitStartup(ctx)
	if err != nil {
		_ = h.Close()
		return nil, sum, exit(ExitFailure, fmt.Errorf("waiting for servers: %w", err))
	}
	return h, sum, nil
}

// launchHost builds a host for cfg and starts every server without
// waiting for them; see startHost.
func (g *globals) launchHost(ctx context.Context, cfg *config.Config, progress bool, opts host.Options) (*host.Host, error) {
	if progress {
		opts.Sinks = append(opts.Sinks, newProgress(g.io.Err, len(enabled(cfg))))
	}
	opts.Logger, opts.LookupEnv = g.logger(), g.io.LookupEnv
	h, err := host.New(cfg, opts)
	if err != nil {
		return nil, exit(ExitFailure, err)
	}
	h.Start(ctx)
	return h, nil
}

func enabled(cfg *config.Config) []config.Server {
	var out []config.Server
	for _, s := range cfg.Servers {
		if s.Enabled {
			out = append(out, s)
		}
	}
	return out
}

// progress prints startup outcomes as they happen, for people watching a
// terminal while slow servers start.
type progress struct {
	w     io.Writer
	total int

	mu      sync.Mutex
	started map[string]time.Time
}

func newProgress(w io.Writer, total int) *progress {
	if total > 0 {
		fmt.Fprintf(w, "starting %d MCP server(s)…\n", total)
	}
	return &progress{w: w, total: total, started: map[string]time.Time{}}
}

func (p *progress) Emit(e events.Event) {
	ev, ok := e.(events.ServerStartup)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev.Status {
	case events.StatusStarting:
		p.started[ev.Server] = ev.At
	case events.StatusReady:
		fmt.Fprintf(p.w, "  ✓ %s ready: %d tools, protocol %s (%s)\n", ev.Server, ev.Tools, ev.Protocol, p.took(ev))
	case events.StatusFailed:
		fmt.Fprintf(p.w, "  ✗ %s failed (%s): %s\n", ev.Server, p.took(ev), ev.Error)
	case events.StatusCancelled:
		fmt.Fprintf(p.w, "  - %s cancelled\n", ev.Server)
	}
}

func (p *progress) took(ev events.ServerStartup) string {
	t, ok := p.started[ev.Server]
	if !ok {
		return "?"
	}
	return ev.At.Sub(t).Round(10 * time.Millisecond).String()
}
