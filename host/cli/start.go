package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/host"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/exposure"
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

// startForTool starts every server but waits only until name resolves
// for good: for the servers that may own or rename it (see
// Manager.MayClaim), or for every server when name is a host tool
// (tool_search, the resource tools), whose answers span all of them. A
// hung server that cannot own the tool never delays the call. The step
// it returns has name when it is found; when it is not, the error says
// which server that could own it is not ready. The caller closes the host.
func (g *globals) startForTool(ctx context.Context, cfg *config.Config, opts host.Options, name string) (*host.Host, *exposure.Step, *exposure.Tool, error) {
	h, err := g.launchHost(ctx, cfg, false, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	for {
		pending, next := h.Manager.Unsettled()
		step := h.NewStep("")
		t, found := step.Lookup(name)
		switch {
		case len(pending) == 0:
			return h, step, t, notFound(h, cfg, step, name, found)
		case found && t.Exposure == exposure.Builtin || hostTools[name]:
			// wait for every server
		case !slices.ContainsFunc(pending, func(s string) bool { return h.Manager.MayClaim(s, name) }):
			return h, step, t, notFound(h, cfg, step, name, found)
		}
		select {
		case <-next:
		case <-ctx.Done():
			_ = h.Close()
			return nil, nil, nil, exit(ExitFailure, fmt.Errorf("waiting for servers: %w", ctx.Err()))
		}
	}
}

// hostTools are the host's own tools: what they offer or answer depends
// on every server.
var hostTools = map[string]bool{
	exposure.SearchToolName:        true,
	exposure.ListResourcesToolName: true,
	exposure.ListTemplatesToolName: true,
	exposure.ReadResourceToolName:  true,
}

// startForServer starts every server and waits only for server's first
// start to end (ready or failed), for commands about one server. The
// caller closes the host.
func (g *globals) startForServer(ctx context.Context, cfg *config.Config, progress bool, opts host.Options, server string) (*host.Host, error) {
	h, err := g.launchHost(ctx, cfg, progress, opts)
	if err != nil {
		return nil, err
	}
	for {
		pending, next := h.Manager.Unsettled()
		if !slices.Contains(pending, server) {
			return h, nil
		}
		select {
		case <-next:
		case <-ctx.Done():
			_ = h.Close()
			return nil, exit(ExitFailure, fmt.Errorf("waiting for server %q: %w", server, ctx.Err()))
		}
	}
}

// notFound is nil when found; otherwise the unknown-tool error, naming
// the servers that could own name but are not ready, and close names.
func notFound(h *host.Host, cfg *config.Config, step *exposure.Step, name string, found bool) error {
	if found {
		return nil
	}
	var why []string
	for _, s := range cfg.Servers {
		if s.Enabled && h.Manager.MayClaim(s.Name, name) {
			if err := h.Manager.NotReady(s.Name); err != nil {
				why = append(why, err.Error())
			}
		}
	}
	if len(why) > 0 {
		return exit(ExitFailure, fmt.Errorf("unsupported call: %s (%s)", name, strings.Join(why, "; ")))
	}
	return exit(ExitFailure, fmt.Errorf("unsupported call: %s%s", name, suggest(step, name)))
}
