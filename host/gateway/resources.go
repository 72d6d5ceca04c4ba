package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/toolgate/toolgate/host/exposure"
	"github.com/toolgate/toolgate/host/manager"
	"github.com/toolgate/toolgate/host/pipeline"
)

// RewriteScheme is the scheme of a rewritten resource URI. A URI (or URI
// template) that two servers both list is served as
// toolgate://<server>/<uri as the server gave it>, for every server that
// lists it: no server loses it, and the rewrite is undone by stripping
// the prefix (see SplitURI). A URI only one server lists is served as is.
const RewriteScheme = "toolgate"

// rewritePrefix is what a rewritten URI of server starts with.
func rewritePrefix(server string) string { return RewriteScheme + "://" + server + "/" }

// SplitURI undoes the collision rewrite: for toolgate://<server>/<uri> it
// returns server and uri; ok is false for any other URI.
func SplitURI(uri string) (server, raw string, ok bool) {
	rest, ok := strings.CutPrefix(uri, RewriteScheme+"://")
	if !ok {
		return "", "", false
	}
	server, raw, ok = strings.Cut(rest, "/")
	return server, raw, ok && server != "" && raw != ""
}

// offerPlan is the upstream form of one catalog revision's resources,
// resource templates and prompts, shared by every session.
type offerPlan struct {
	rev       uint64
	resources map[string]*servedResource // by upstream URI
	templates map[string]*servedResource // by upstream URI template
	prompts   map[string]*servedPrompt   // by upstream name
	// offering are the servers that list resources or templates.
	offering []string
	// conflicts say which URIs were rewritten and which prompt names
	// could not be served; logged once per plan.
	conflicts []string
}

// servedResource is one resource or resource template as upstream sees
// it. prefix is the rewrite prefix ("" when the URI is kept).
type servedResource struct {
	server string
	raw    string // URI or URI template on the server
	prefix string
	res    *mcp.Resource
	tmpl   *mcp.ResourceTemplate
	match  *regexp.Regexp // templates only: what URIs the template produces
}

type servedPrompt struct {
	server string
	raw    string
	spec   *mcp.Prompt
}

// offers returns the plan of the manager's current catalog, building it
// once per revision.
func (g *Gateway) offers() *offerPlan {
	cat := g.host.Manager.Snapshot()
	g.offerMu.Lock()
	defer g.offerMu.Unlock()
	if g.offerPlan != nil && g.offerPlan.rev == cat.Revision {
		return g.offerPlan
	}
	p := buildOfferPlan(cat)
	for _, c := range p.conflicts {
		g.warns.Warn(g.log, "resource or prompt naming conflict", "conflict", c)
	}
	g.offerPlan = p
	return p
}

func buildOfferPlan(cat *manager.Snapshot) *offerPlan {
	p := &offerPlan{rev: cat.Revision, resources: map[string]*servedResource{},
		templates: map[string]*servedResource{}, prompts: map[string]*servedPrompt{}}
	type claim struct {
		server string
		res    *mcp.Resource
		tmpl   *mcp.ResourceTemplate
	}
	place := func(kind string, into map[string]*servedResource, claims map[string][]claim, order []string) {
		for _, uri := range order {
			cs := claims[uri]
			servers := map[string]bool{}
			for _, c := range cs {
				servers[c.server] = true
			}
			rewrite := len(servers) > 1
			var names []string
			for _, c := range cs {
				if !servers[c.server] {
					continue // a server listing the same URI twice: its first is served
				}
				delete(servers, c.server)
				r := &servedResource{server: c.server, raw: uri, res: c.res, tmpl: c.tmpl}
				up := uri
				if rewrite {
					r.prefix = rewritePrefix(c.server)
					up = r.prefix + uri
					names = append(names, fmt.Sprintf("%q as %q", c.server, up))
				}
				if c.tmpl != nil {
					r.match = templateRegexp(up)
				}
				into[up] = r
			}
			if rewrite {
				p.conflicts = append(p.conflicts, fmt.Sprintf("%s %q is listed by several servers; each is served under a rewritten URI: %s",
					kind, uri, strings.Join(names, ", ")))
			}
		}
	}
	seen := map[string]bool{}
	var order []string
	claims := map[string][]claim{}
	for _, r := range cat.Resources {
		if !seen[r.Resource.URI] {
			seen[r.Resource.URI] = true
			order = append(order, r.Resource.URI)
		}
		claims[r.Resource.URI] = append(claims[r.Resource.URI], claim{server: r.Server, res: r.Resource})
		if !slices.Contains(p.offering, r.Server) {
			p.offering = append(p.offering, r.Server)
		}
	}
	place("resource URI", p.resources, claims, order)
	seen, order, claims = map[string]bool{}, nil, map[string][]claim{}
	for _, t := range cat.Templates {
		if !seen[t.Template.URITemplate] {
			seen[t.Template.URITemplate] = true
			order = append(order, t.Template.URITemplate)
		}
		claims[t.Template.URITemplate] = append(claims[t.Template.URITemplate], claim{server: t.Server, tmpl: t.Template})
		if !slices.Contains(p.offering, t.Server) {
			p.offering = append(p.offering, t.Server)
		}
	}
	place("resource template", p.templates, claims, order)

	byName := map[string][]*servedPrompt{}
	var names []string
	for _, pi := range cat.Prompts {
		name := pi.Prompt.Name
		if info, ok := cat.Servers[pi.Server]; ok && info.Config.Prefix {
			name = "mcp__" + pi.Server + "__" + pi.Prompt.Name
		}
		if byName[name] == nil {
			names = append(names, name)
		}
		byName[name] = append(byName[name], &servedPrompt{server: pi.Server, raw: pi.Prompt.Name, spec: pi.Prompt})
	}
	for _, name := range names {
		ps := byName[name]
		if len(ps) > 1 {
			owners := make([]string, len(ps))
			for i, sp := range ps {
				owners[i] = fmt.Sprintf("prompt %q of server %q", sp.raw, sp.server)
			}
			p.conflicts = append(p.conflicts, fmt.Sprintf("upstream prompt name %q is claimed by %s; none of them is served. "+
				"Fix: set prefix = true in their server blocks so prompts are served as mcp__<server>__<prompt>, or disable one with disabled_prompts",
				name, strings.Join(owners, " and by ")))
			continue
		}
		p.prompts[name] = ps[0]
	}
	return p
}

// templateRegexp matches the URIs an RFC 6570 template can produce, to
// find the owner of a URI that no server lists but a template makes (a
// subscription to it). It is the matcher go-sdk servers use for their own
// templates, so a URI routed here is one the server accepts. A template
// that does not parse matches nothing.
func templateRegexp(tmpl string) *regexp.Regexp {
	t, err := uritemplate.New(tmpl)
	if err != nil {
		return regexp.MustCompile(`^\b$`)
	}
	return t.Regexp()
}

// route finds which server a requested upstream URI belongs to and the
// URI to send it, with the rewrite prefix to put back on what returns.
func (p *offerPlan) route(uri string) (r *servedResource, raw string, ok bool) {
	if r := p.resources[uri]; r != nil {
		return r, r.raw, true
	}
	// Templates, most specific (longest) first.
	var cands []*servedResource
	for _, t := range p.templates {
		if t.match.MatchString(uri) {
			cands = append(cands, t)
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		return len(a.prefix+a.raw) > len(b.prefix+b.raw) || len(a.prefix+a.raw) == len(b.prefix+b.raw) && a.server < b.server
	})
	if len(cands) > 0 {
		return cands[0], strings.TrimPrefix(uri, cands[0].prefix), true
	}
	if server, rest, ok := SplitURI(uri); ok && slices.Contains(p.offering, server) {
		return &servedResource{server: server, prefix: rewritePrefix(server)}, rest, true
	}
	if len(p.offering) == 1 {
		// One server behind the gateway: a URI it did not list (a
		// resource it reads but does not enumerate) can only be its.
		return &servedResource{server: p.offering[0]}, uri, true
	}
	return nil, "", false
}

// offered says which of resources, prompts and completions upstream
// sessions declare: those any ready server declares, and all three while
// an enabled server has not ended its first start. A session's
// capabilities are fixed at initialize, so a session that starts before
// a slow server is ready would otherwise never offer what that server
// brings (its resources arrive later with resources/list_changed); an
// empty list meanwhile is harmless.
type offered struct{ resources, prompts, completions bool }

func (g *Gateway) offered() offered {
	h := g.host
	if h.Manager.Settling() {
		return offered{true, true, true}
	}
	var o offered
	for _, info := range h.Manager.Snapshot().Servers {
		if c := info.Capabilities; c != nil {
			o.resources = o.resources || c.Resources != nil
			o.prompts = o.prompts || c.Prompts != nil
			o.completions = o.completions || c.Completions != nil
		}
	}
	return o
}

// capabilities are what a session with these offers declares.
func (o offered) capabilities() *mcp.ServerCapabilities {
	c := sessionCapabilities()
	if o.resources {
		c.Resources = &mcp.ResourceCapabilities{Subscribe: true, ListChanged: true}
	}
	if o.prompts {
		c.Prompts = &mcp.PromptCapabilities{ListChanged: true}
	}
	if o.completions {
		c.Completions = &mcp.CompletionCapabilities{}
	}
	return c
}

// offerOptions sets the capabilities and handlers of a session's server
// for what the downstream servers declare (see offered).
func (g *Gateway) offerOptions(o *mcp.ServerOptions) {
	off := g.offered()
	o.Capabilities = off.capabilities()
	if off.resources {
		o.SubscribeHandler = g.subscribe
		o.UnsubscribeHandler = g.unsubscribe
	}
	if off.completions {
		o.CompletionHandler = g.complete
	}
}

// sessionOffers is what one session's server holds of the offer plan,
// and the resources the session subscribed to.
type sessionOffers struct {
	mu        sync.Mutex
	plan      *offerPlan
	resources map[string]*servedResource
	templates map[string]*servedResource
	prompts   map[string]*servedPrompt
	subs      map[subKey]string // downstream resource → upstream URI
}

// subKey is one downstream resource.
type subKey struct{ server, uri string }

// syncOffers makes the session's server hold the current offer plan;
// go-sdk then sends resources/list_changed and prompts/list_changed to
// the client when its lists differ.
func (s *session) syncOffers() {
	p := s.g.offers()
	o := &s.offers
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.plan == p {
		return
	}
	var gone []string
	for uri, r := range o.resources {
		if n := p.resources[uri]; n == nil || !reflect.DeepEqual(n.res, r.res) {
			gone = append(gone, uri)
		}
	}
	s.server.RemoveResources(gone...)
	gone = gone[:0]
	for uri, r := range o.templates {
		if n := p.templates[uri]; n == nil || !reflect.DeepEqual(n.tmpl, r.tmpl) {
			gone = append(gone, uri)
		}
	}
	s.server.RemoveResourceTemplates(gone...)
	gone = gone[:0]
	for name, sp := range o.prompts {
		if n := p.prompts[name]; n == nil || n.server != sp.server || !reflect.DeepEqual(n.spec, sp.spec) {
			gone = append(gone, name)
		}
	}
	s.server.RemovePrompts(gone...)

	for uri, r := range p.resources {
		if old := o.resources[uri]; old != nil && reflect.DeepEqual(old.res, r.res) {
			continue
		}
		spec := *r.res
		spec.URI = uri
		s.server.AddResource(&spec, s.readHandler(r))
	}
	for uri, r := range p.templates {
		if old := o.templates[uri]; old != nil && reflect.DeepEqual(old.tmpl, r.tmpl) {
			continue
		}
		spec := *r.tmpl
		spec.URITemplate = uri
		s.addTemplate(&spec, r)
	}
	for name, sp := range p.prompts {
		if old := o.prompts[name]; old != nil && old.server == sp.server && reflect.DeepEqual(old.spec, sp.spec) {
			continue
		}
		spec := *sp.spec
		spec.Name = name
		s.server.AddPrompt(&spec, s.promptHandler(sp))
	}
	o.plan, o.resources, o.templates, o.prompts = p, p.resources, p.templates, p.prompts
}

// addTemplate adds one template; go-sdk panics on a template it cannot
// parse, which must cost only that template.
func (s *session) addTemplate(spec *mcp.ResourceTemplate, r *servedResource) {
	defer func() {
		if v := recover(); v != nil {
			s.g.warns.Warn(s.log, "not serving a resource template: go-sdk cannot parse it; fix it in its server", "server", r.server, "template", r.raw, "reason", fmt.Sprint(v))
		}
	}()
	s.server.AddResourceTemplate(spec, s.readHandler(r))
}

// readHandler routes a read of r (or a URI its template produces) to
// its server and puts the rewrite prefix back on the URIs it returns.
func (s *session) readHandler(r *servedResource) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		raw := r.raw
		if r.tmpl != nil {
			raw = strings.TrimPrefix(req.Params.URI, r.prefix)
		}
		out, err := s.do(ctx, pipeline.Request{Kind: pipeline.ResourceRead, Server: r.server, URI: raw,
			ModelName: req.Params.URI, TraceParent: traceParentOf(req.Params.Meta, req.Extra)})
		if err != nil {
			return nil, err
		}
		res := out.Resource
		if r.prefix != "" {
			out := *res
			out.Contents = make([]*mcp.ResourceContents, len(res.Contents))
			for i, c := range res.Contents {
				if c != nil {
					cc := *c
					cc.URI = r.prefix + c.URI
					c = &cc
				}
				out.Contents[i] = c
			}
			res = &out
		}
		return res, nil
	}
}

func (s *session) promptHandler(sp *servedPrompt) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		args, _ := json.Marshal(req.Params.Arguments)
		out, err := s.do(ctx, pipeline.Request{Kind: pipeline.PromptGet, Server: sp.server, Name: sp.raw,
			ModelName: req.Params.Name, Arguments: args, PromptArguments: req.Params.Arguments,
			TraceParent: traceParentOf(req.Params.Meta, req.Extra)})
		if err != nil {
			return nil, err
		}
		return out.Prompt, nil
	}
}

// codeRefused is the JSON-RPC error code of a request toolgate refused
// (a rate limit, a policy): an implementation-defined server error, with
// the refusal's text as the message.
const codeRefused = -32000

// do runs one of this session's requests other than tool calls through
// the pipeline, as this session's caller, and turns a refusal or a
// failure into the JSON-RPC error the client receives.
func (s *session) do(ctx context.Context, r pipeline.Request) (pipeline.Result, error) {
	r.SessionID, r.Caller, r.Client = s.id, s.caller, s.client()
	res := s.h.Pipeline().Do(ctx, r)
	switch {
	case res.Refused():
		return res, &jsonrpc.Error{Code: codeRefused, Message: res.Err.Error()}
	case res.Err != nil:
		return res, upstreamError(res.Err)
	}
	return res, nil
}

// upstreamError keeps the JSON-RPC code a server answered with (a
// resource that does not exist stays -32002), with toolgate's text.
func upstreamError(err error) error {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return &jsonrpc.Error{Code: je.Code, Message: err.Error(), Data: je.Data}
	}
	switch {
	case errors.Is(err, manager.ErrResourceDisabled), errors.Is(err, manager.ErrPromptDisabled):
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	return err
}

// sessionOf returns the session a request came in on. Over HTTP the
// request's context names it (sessionKey): a 2026-07-28 request comes on
// a go-sdk session of its own (modern.go), and a stateful session's
// requests may come before bind recorded its go-sdk session. Over stdio
// the go-sdk session does.
func (g *Gateway) sessionOf(ctx context.Context, ss *mcp.ServerSession) (*session, error) {
	if s, ok := ctx.Value(sessionKey{}).(*session); ok {
		return s, nil
	}
	if ss != nil {
		for _, s := range g.snapshot() {
			s.mu.Lock()
			mine := s.ss == ss
			s.mu.Unlock()
			if mine {
				return s, nil
			}
		}
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the upstream session is closing"}
}

// complete forwards completion/complete to the server owning the prompt
// or resource it refers to, under that server's names.
func (g *Gateway) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	s, err := g.sessionOf(ctx, req.Session)
	if err != nil {
		return nil, err
	}
	s.offers.mu.Lock()
	p := s.offers.plan
	s.offers.mu.Unlock()
	if p == nil || req.Params == nil || req.Params.Ref == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion/complete needs a ref"}
	}
	params := *req.Params
	ref := *params.Ref
	var server string
	switch ref.Type {
	case "ref/prompt":
		sp := p.prompts[ref.Name]
		if sp == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", ref.Name)}
		}
		server, ref.Name = sp.server, sp.raw
	case "ref/resource":
		r := p.templates[ref.URI]
		if r == nil {
			r = p.resources[ref.URI]
		}
		if r == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown resource %q", ref.URI)}
		}
		server, ref.URI = r.server, r.raw
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown ref type %q", ref.Type)}
	}
	params.Ref = &ref
	var arg []byte
	if params.Argument.Name != "" {
		arg, _ = json.Marshal(map[string]string{params.Argument.Name: params.Argument.Value})
	}
	out, err := s.do(ctx, pipeline.Request{Kind: pipeline.Completion, Server: server, Name: ref.Name, URI: ref.URI,
		ModelName: req.Params.Ref.Name + req.Params.Ref.URI, Arguments: arg, Complete: &params,
		TraceParent: traceParentOf(req.Params.Meta, req.Extra)})
	if err != nil {
		return nil, err
	}
	return out.Completion, nil
}

// withoutResourceTools leaves out the host's resource tools
// (list_mcp_resources, ...): upstream clients get resources/* instead.
func withoutResourceTools(tools []*exposure.Tool) []*exposure.Tool {
	out := tools[:0:0]
	for _, t := range tools {
		if t.Exposure == exposure.Builtin && exposure.IsResourceTool(t.ModelName) {
			continue
		}
		out = append(out, t)
	}
	return out
}
