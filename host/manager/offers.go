package manager

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/catalog"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/mcpclient"
)

// offers is what a server lists beyond its tools, after its filters.
type offers struct {
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
	prompts   []*mcp.Prompt
}

// Sentinel errors of the resource and prompt calls, wrapped in a message
// naming the server.
var (
	// ErrResourceDisabled: enabled_resources/disabled_resources exclude
	// the URI.
	ErrResourceDisabled = errors.New("resource is disabled")
	// ErrPromptDisabled: enabled_prompts/disabled_prompts exclude the
	// prompt.
	ErrPromptDisabled = errors.New("prompt is disabled")
)

// offerFilters are a server's resource and prompt filters.
type offerFilters struct {
	resources catalog.Filter
	prompts   catalog.Filter
}

func newOfferFilters(sc config.Server) offerFilters {
	r, _ := catalog.NewFilter(sc.EnabledResources, sc.DisabledResources)
	p, _ := catalog.NewFilter(sc.EnabledPrompts, sc.DisabledPrompts)
	return offerFilters{resources: r, prompts: p}
}

// offerFiltersChanged reports whether a reload changes what the resource
// or prompt filters let through, so the server is listed again.
func offerFiltersChanged(a, b config.Server) bool {
	return !sameGlobs(a.EnabledResources, b.EnabledResources) || !sameGlobs(a.DisabledResources, b.DisabledResources) ||
		!sameGlobs(a.EnabledPrompts, b.EnabledPrompts) || !sameGlobs(a.DisabledPrompts, b.DisabledPrompts)
}

func sameGlobs(a, b []string) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// listOffers lists the resources, templates and prompts of c, each only
// when the server declares the capability. A listing that fails is
// logged and left empty: tools stay usable when a server's resources are
// broken. A listing over its limits keeps what it collected and says why
// in degraded.
func (m *Manager) listOffers(ctx context.Context, s *server, c *mcpclient.Client) (o offers, degraded error) {
	caps := &mcp.ServerCapabilities{}
	if r := c.InitializeResult(); r != nil && r.Capabilities != nil {
		caps = r.Capabilities
	}
	m.mu.Lock()
	f := s.offerFilter
	m.mu.Unlock()
	note := func(what string, err error) {
		if errors.Is(err, mcpclient.ErrListTruncated) {
			degraded = errors.Join(degraded, err)
			return
		}
		m.warns.Warn(m.log, "listing failed; the server is served without them", "server", s.name, "what", what, "error", err)
	}
	if caps.Resources != nil {
		rs, err := c.ListResources(ctx)
		if err != nil {
			note("resources", err)
		}
		for _, r := range rs {
			if f.resources.Allows(r.URI) {
				o.resources = append(o.resources, r)
			}
		}
		ts, err := c.ListResourceTemplates(ctx)
		if err != nil {
			note("resource templates", err)
		}
		for _, t := range ts {
			if f.resources.Allows(t.URITemplate) {
				o.templates = append(o.templates, t)
			}
		}
	}
	if caps.Prompts != nil {
		ps, err := c.ListPrompts(ctx)
		if err != nil {
			note("prompts", err)
		}
		for _, p := range ps {
			if f.prompts.Allows(p.Name) {
				o.prompts = append(o.prompts, p)
			}
		}
	}
	return o, degraded
}

// offersOf fills the catalog's resources, templates and prompts from the
// ready servers, in config order. Called with m.mu held.
func (m *Manager) offersOf(cat *Snapshot) {
	for _, name := range m.order {
		s := m.servers[name]
		if s.status != events.StatusReady {
			continue
		}
		for _, r := range s.offers.resources {
			cat.Resources = append(cat.Resources, catalog.ResourceInfo{Server: name, Resource: r})
		}
		for _, t := range s.offers.templates {
			cat.Templates = append(cat.Templates, catalog.TemplateInfo{Server: name, Template: t})
		}
		for _, p := range s.offers.prompts {
			cat.Prompts = append(cat.Prompts, catalog.PromptInfo{Server: name, Prompt: p})
		}
	}
}

// readyClient returns server's client once its first start settled
// (bounded by ctx), with its filters, or why it cannot take requests.
func (m *Manager) readyClient(ctx context.Context, server string) (*mcpclient.Client, offerFilters, error) {
	m.mu.Lock()
	s, ok := m.servers[server]
	m.mu.Unlock()
	if !ok {
		return nil, offerFilters{}, fmt.Errorf("%w %q", ErrUnknownServer, server)
	}
	select {
	case <-s.settled:
	case <-ctx.Done():
		return nil, offerFilters{}, fmt.Errorf("waiting for MCP server %q to start: %w", server, ctx.Err())
	}
	m.mu.Lock()
	c, status, serr, f := s.client, s.status, s.err, s.offerFilter
	m.mu.Unlock()
	if c == nil || status != events.StatusReady {
		return nil, f, notReady(server, status, serr)
	}
	return c, f, nil
}

// ReadResource sends resources/read for uri to server. The resource
// filters of its block apply to the URI.
func (m *Manager) ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error) {
	c, f, err := m.readyClient(ctx, server)
	if err != nil {
		return nil, err
	}
	if !f.resources.Allows(uri) {
		return nil, fmt.Errorf("%w: resource %.200q is disabled for MCP server %q", ErrResourceDisabled, uri, server)
	}
	return c.ReadResource(ctx, uri)
}

// GetPrompt sends prompts/get for server's raw prompt name.
func (m *Manager) GetPrompt(ctx context.Context, server, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	c, f, err := m.readyClient(ctx, server)
	if err != nil {
		return nil, err
	}
	if !f.prompts.Allows(name) {
		return nil, fmt.Errorf("%w: prompt %q is disabled for MCP server %q", ErrPromptDisabled, name, server)
	}
	return c.GetPrompt(ctx, name, args)
}

// Complete sends completion/complete to server; params.Ref names the
// server's raw prompt name or resource URI (template).
func (m *Manager) Complete(ctx context.Context, server string, params *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	c, f, err := m.readyClient(ctx, server)
	if err != nil {
		return nil, err
	}
	if r := params.Ref; r != nil {
		switch {
		case r.Type == "ref/prompt" && !f.prompts.Allows(r.Name):
			return nil, fmt.Errorf("%w: prompt %q is disabled for MCP server %q", ErrPromptDisabled, r.Name, server)
		case r.Type == "ref/resource" && !f.resources.Allows(r.URI):
			return nil, fmt.Errorf("%w: resource %.200q is disabled for MCP server %q", ErrResourceDisabled, r.URI, server)
		}
	}
	return c.Complete(ctx, params)
}

// Subscribe sends resources/subscribe for uri to server; updates reach
// Options.ResourceUpdated. The subscription outlives the connection: a
// server that restarts is subscribed again once ready.
func (m *Manager) Subscribe(ctx context.Context, server, uri string) error {
	c, f, err := m.readyClient(ctx, server)
	if err != nil {
		return err
	}
	if !f.resources.Allows(uri) {
		return fmt.Errorf("%w: resource %.200q is disabled for MCP server %q", ErrResourceDisabled, uri, server)
	}
	if err := c.Subscribe(ctx, uri); err != nil {
		return err
	}
	m.mu.Lock()
	if s := m.servers[server]; s != nil {
		if s.subscribed == nil {
			s.subscribed = map[string]bool{}
		}
		s.subscribed[uri] = true
	}
	m.mu.Unlock()
	return nil
}

// Unsubscribe sends resources/unsubscribe for uri to server.
func (m *Manager) Unsubscribe(ctx context.Context, server, uri string) error {
	m.mu.Lock()
	if s := m.servers[server]; s != nil {
		delete(s.subscribed, uri)
	}
	m.mu.Unlock()
	c, _, err := m.readyClient(ctx, server)
	if err != nil {
		return err
	}
	return c.Unsubscribe(ctx, uri)
}

// resubscribe subscribes a new client of s (a restart) to what s was
// subscribed to before, before it becomes ready: once ready, updates
// flow again. A failure is logged, not fatal: the tools still work.
func (m *Manager) resubscribe(ctx context.Context, s *server, c *mcpclient.Client) {
	m.mu.Lock()
	uris := make([]string, 0, len(s.subscribed))
	for uri := range s.subscribed {
		uris = append(uris, uri)
	}
	m.mu.Unlock()
	for _, uri := range uris {
		if err := c.Subscribe(ctx, uri); err != nil {
			m.log.Warn("subscribing again after a restart failed; updates of the resource stop", "server", s.name, "error", err)
		}
	}
}
