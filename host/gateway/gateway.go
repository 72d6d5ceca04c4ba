package gateway

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/exposure"
	"github.com/toolgate/toolgate/host/inbox"
	"github.com/toolgate/toolgate/host/internal/slogbridge"
	"github.com/toolgate/toolgate/host/internal/warnlimit"
	"github.com/toolgate/toolgate/host/mcpclient"
	"github.com/toolgate/toolgate/host/version"
)

// DefaultInputTimeout is how long a call waits for a 2026-07-28 client
// to come back with input it was asked for (see Options.InputTimeout).
const DefaultInputTimeout = 10 * time.Minute

// DefaultSessionTimeout is how long an HTTP session may go without a
// request before it is closed (see Options.SessionTimeout).
const DefaultSessionTimeout = 30 * time.Minute

// Options configures a Gateway. Every field is optional.
type Options struct {
	// Logger receives the gateway's logs; nil discards them.
	Logger hclog.Logger
	// Implementation identifies the gateway to upstream clients; nil
	// means toolgate at version.Toolgate.
	Implementation *mcp.Implementation
	// InputTimeout bounds how long a call of a 2026-07-28 client waits,
	// between two rounds, for the client to retry with the input it was
	// asked for (an approval, a server's elicitation). The call is then
	// cancelled. 0 means DefaultInputTimeout. Older clients are asked
	// within the request and need no such bound.
	InputTimeout time.Duration
	// SessionTimeout closes an HTTP session that has had no request open
	// (no POST in flight, no GET event stream) for this long, with its
	// approval memory: a client that went away without DELETE would
	// otherwise hold its session, server and goroutines for the gateway's
	// life. Its next request gets 404; the client must initialize again.
	// 0 means DefaultSessionTimeout; it is raised to InputTimeout when
	// shorter, so a call waiting for its client's input outlives no
	// session. Stdio sessions end with their stream instead.
	SessionTimeout time.Duration
	// DrainGrace is how long ServeHTTP, when its context ends, lets calls
	// in flight finish before it ends every session (see Drain). 0 ends
	// them at once.
	DrainGrace time.Duration
	// Inbox holds calls whose user step cannot go to the client (or that
	// a route sends there) for a human to answer from /approvals, the CLI
	// or a webhook; nil = no inbox, such calls are denied.
	Inbox *inbox.Inbox
}

// ErrClosed is returned by the Serve methods after Close.
var ErrClosed = errors.New("gateway: closed")

// Gateway serves the host's governed tools to upstream MCP clients. Build
// it with New for a host built with host.Options{Serving: true}, then
// serve.
type Gateway struct {
	opts Options
	log  hclog.Logger
	// warns rate-limits every warning a client's or server's message can
	// cause (sessions refused, requests declined, tools not served).
	warns *warnlimit.Limiter
	impl  *mcp.Implementation
	// ctx ends when Close is called; it bounds the catalog watcher and
	// every session.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine the gateway starts
	// changed is poked (never blocking) when a server's state or tools
	// change; capacity 1 coalesces bursts.
	changed chan struct{}
	// unlisten ends the host.Listener of New.
	unlisten func()
	// ph is the server for requests that address no live session, built
	// for the capabilities phOffers (see placeholder).
	phMu     sync.Mutex
	ph       *mcp.Server
	phOffers offered

	host *host.Host // fixed at New

	mu       sync.Mutex
	sessions map[string]*session
	// handshaking are HTTP sessions whose initialize is being answered:
	// the client may already send requests with their id.
	handshaking map[string]*session
	// modern are the sessions of 2026-07-28 clients over HTTP, by
	// modernKey (modern.go); modernMu serializes opening them.
	modern   map[string]*session
	modernMu sync.Mutex
	// reserved counts sessions admitted within max_sessions that are
	// being built, not yet handshaking.
	reserved int
	// built counts the sessions ever built: each costs a go-sdk server
	// and a step, so only an initialize may build one.
	built atomic.Uint64
	plan  *catalogPlan // the last plan built; reused while its key holds
	// holders are the tools that hold each upstream name served so far;
	// see nameTools.
	holders map[string]Owner
	closed  bool

	ops ops // draining and work in flight; see ops.go
	// offerState holds resources, prompts and subscriptions (resources.go).
	offerState
}

// New returns a gateway serving h's tools, following its catalog from
// now on: it names every tool of the current catalog for upstream. Build
// h with host.Options{Serving: true}, so that each call's server
// messages reach its client (see host.Listener for the rest).
//
// A *NameError (errors.Is ErrToolName) means the configuration gives two
// tools the same upstream name, or a name MCP does not allow: no gateway
// is returned, and the caller should report it as a configuration error.
func New(h *host.Host, opts Options) (*Gateway, error) {
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if opts.InputTimeout <= 0 {
		opts.InputTimeout = DefaultInputTimeout
	}
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = DefaultSessionTimeout
	}
	opts.SessionTimeout = max(opts.SessionTimeout, opts.InputTimeout)
	impl := opts.Implementation
	if impl == nil {
		impl = &mcp.Implementation{Name: "toolgate", Title: "toolgate (governed MCP gateway)", Version: version.Toolgate}
	}
	ctx, cancel := context.WithCancel(context.Background())
	g := &Gateway{
		opts:        opts,
		log:         log.Named("gateway"),
		warns:       warnlimit.New(warnlimit.Options{}),
		impl:        impl,
		ctx:         ctx,
		cancel:      cancel,
		changed:     make(chan struct{}, 1),
		host:        h,
		sessions:    map[string]*session{},
		handshaking: map[string]*session{},
	}
	if p := g.planFor(h.NewStep("")); p.err != nil {
		cancel()
		return nil, p.err
	}
	// Resource updates go to the sessions that subscribed (a
	// subscription is the gateway's, shared by them), and a server's log
	// message sent outside any call to every session; what a server
	// sends during a call reaches that call as its Upstream.
	g.unlisten = h.Listen(host.Listener{ResourceUpdated: g.ForwardResourceUpdated, ServerLog: g.broadcastLog})
	h.Bus.AddSink(events.SinkFunc(func(e events.Event) {
		g.reportStartupFailure(e)
		switch e.(type) {
		case events.ServerState, events.ServerStartup, events.StartupComplete, events.ConfigApplied:
			select {
			case g.changed <- struct{}{}:
			default:
			}
		}
	}))
	g.wg.Add(2)
	go g.followCatalog()
	go g.deliverUpdates()
	return g, nil
}

// Tools returns the names served to a new session, sorted. It is for
// status output.
func (g *Gateway) Tools() []string {
	p := g.planFor(g.host.NewStep(""))
	var out []string
	for name, t := range p.tools {
		if !t.deferred {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// followCatalog refreshes every session when the catalog changed, which
// makes go-sdk send notifications/tools/list_changed to the sessions
// whose list differs.
func (g *Gateway) followCatalog() {
	defer g.wg.Done()
	for {
		select {
		case <-g.ctx.Done():
			return
		case <-g.changed:
		}
		for _, s := range g.snapshot() {
			s.refresh()
		}
	}
}

// snapshot returns the live sessions.
func (g *Gateway) snapshot() []*session {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]*session, 0, len(g.sessions))
	for _, s := range g.sessions {
		out = append(out, s)
	}
	return out
}

// Close ends every upstream session and cancels their calls, then waits
// for every goroutine of the gateway. It does not close the host.
// Idempotent.
func (g *Gateway) Close() error {
	g.mu.Lock()
	g.closed = true
	if g.unlisten != nil {
		g.unlisten()
		g.unlisten = nil
	}
	sessions := make([]*session, 0, len(g.sessions))
	for _, s := range g.sessions {
		sessions = append(sessions, s)
	}
	g.mu.Unlock()
	g.cancel()
	for _, s := range sessions {
		s.end()
	}
	g.wg.Wait()
	g.warns.Close()
	return nil
}

// ServeStdio serves one upstream session over t (usually
// &mcp.StdioTransport{}) until the client disconnects or ctx ends.
func (g *Gateway) ServeStdio(ctx context.Context, t mcp.Transport) error {
	s, err := g.newSession()
	if err != nil {
		return err
	}
	pending := &pendingAnswers{}
	ss, err := s.server.Connect(ctx, &answeredTransport{Transport: t, pending: pending}, nil)
	if err != nil {
		s.end()
		return fmt.Errorf("serve MCP over stdio: %w", err)
	}
	s.bind(ss)
	select {
	case <-s.ended:
	case <-ctx.Done():
		g.drainFor()
		// The calls are over (answered or cut); their answers are
		// written before the session closes its pipe.
		answered, cancel := context.WithTimeout(g.ctx, answerGrace)
		pending.wait(answered)
		cancel()
		s.end()
	case <-g.ctx.Done():
		s.end()
	}
	<-s.ended
	return nil
}

// newSession builds an upstream session with its own MCP server, approval
// session and tool list. It is not registered until bind.
func (g *Gateway) newSession() (*session, error) {
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	switch {
	case closed:
		return nil, ErrClosed
	case g.ops.isDraining():
		return nil, ErrDraining
	}
	g.built.Add(1)
	s := newSession(g, g.host)
	s.refresh()
	return s, nil
}

// register makes s reachable for catalog changes, logs and elicitations.
// It returns false when the gateway is closing.
func (g *Gateway) register(s *session) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.sessions[s.id] = s
	return true
}

func (g *Gateway) unregister(s *session) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.sessions[s.id] == s {
		delete(g.sessions, s.id)
	}
	if s.modernKey != "" && g.modern[s.modernKey] == s {
		delete(g.modern, s.modernKey)
	}
}

// session returns the live or handshaking session with id, or nil.
func (g *Gateway) session(id string) *session {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.sessions[id]; s != nil {
		return s
	}
	return g.handshaking[id]
}

// catalogPlan is the upstream form of one step's catalog, shared by every
// session that captured the same catalog and exposure.
type catalogPlan struct {
	key uint64
	// tools are every tool a session may serve, by upstream name: the
	// model-visible ones, tool_search, and deferred tools (served only
	// once tool_search found them in that session).
	tools map[string]*servedTool
	// byModel maps model names to upstream names.
	byModel map[string]string
	// err is a *NameError when some tools were left out for their names.
	err error
}

// servedTool is one tool as an upstream client sees it.
type servedTool struct {
	name      string // upstream name
	modelName string // what exposure.Step.Call takes
	server    string // owning server; "" for tool_search
	raw       string // the tool's name on its server
	deferred  bool
	spec      *mcp.Tool
}

// planFor returns the plan of step's tools, building it only when the
// catalog or the exposure of its tools changed since the last one.
func (g *Gateway) planFor(step *exposure.Step) *catalogPlan {
	visible, deferred := withoutResourceTools(step.Tools()), step.Deferred()
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00", step.Revision())
	for _, t := range visible {
		h.Write([]byte(t.ModelName + "\x00"))
	}
	h.Write([]byte("\x01"))
	for _, t := range deferred {
		h.Write([]byte(t.ModelName + "\x00"))
	}
	key := h.Sum64()

	g.mu.Lock()
	prev := g.plan
	g.mu.Unlock()
	if prev != nil && prev.key == key {
		return prev
	}

	p := g.buildPlan(key, append(append([]*exposure.Tool(nil), visible...), deferred...))
	g.mu.Lock()
	g.plan = p
	g.mu.Unlock()
	return p
}

// buildPlan names tools for upstream. A name keeps going to the tool
// that held it in earlier plans, while that tool is listed or its server
// is down; a holder whose server is up without it, or whose block was
// removed, lets the name go.
func (g *Gateway) buildPlan(key uint64, tools []*exposure.Tool) *catalogPlan {
	g.mu.Lock()
	holders, h := maps.Clone(g.holders), g.host
	g.mu.Unlock()
	listed := make(map[string]bool, len(tools))
	for _, t := range tools {
		listed[ownerKey(t.Server, t.RawName())] = true
	}
	for name, o := range holders {
		if !listed[ownerKey(o.Server, o.Tool)] && (h == nil || h.Manager.NotReady(o.Server) == nil) {
			delete(holders, name)
		}
	}
	named, err := nameTools(tools, holders)
	if err != nil {
		g.log.Error("some tools are not served upstream", "error", err)
	}
	p := &catalogPlan{key: key, tools: make(map[string]*servedTool, len(named)), byModel: make(map[string]string, len(named)), err: err}
	for name, t := range named {
		spec := *t.Tool
		spec.Name = name
		if err := checkTool(&spec); err != nil {
			g.warns.Warn(g.log, "not serving a tool: go-sdk refuses its schema; fix the schema in its server", "server", t.Server, "tool", t.RawName(), "reason", err)
			continue
		}
		encodeSchemas(&spec)
		p.tools[name] = &servedTool{
			name: name, modelName: t.ModelName, server: t.Server, raw: t.RawName(),
			deferred: t.Exposure == exposure.Deferred, spec: &spec,
		}
		p.byModel[t.ModelName] = name
	}
	if holders == nil {
		holders = map[string]Owner{}
	}
	for name, t := range named {
		holders[name] = ownerOf(t)
	}
	g.mu.Lock()
	g.holders = holders
	g.mu.Unlock()
	return p
}

// sameSpec reports whether two served tools look the same upstream, so a
// refresh leaves the tool alone and no list_changed is sent for it.
func sameSpec(a, b *servedTool) bool {
	return a.spec == b.spec || reflect.DeepEqual(a.spec, b.spec)
}

// instructions are what the gateway tells upstream clients about itself
// and the servers behind it.
func instructions(step *exposure.Step) string {
	var b strings.Builder
	b.WriteString("toolgate serves the tools of the MCP servers configured for it. ")
	b.WriteString("Every call goes through toolgate's approval chain; a denied call returns an error result saying why.")
	seen := map[string]bool{}
	var lines []string
	for _, t := range append(step.Tools(), step.Deferred()...) {
		if t.Server == "" || seen[t.Server] {
			continue
		}
		seen[t.Server] = true
		line := "- " + t.Server
		if in := strings.TrimSpace(t.ServerInfo.Instructions); in != "" {
			line += ": " + strings.ReplaceAll(in, "\n", " ")
		}
		lines = append(lines, line)
	}
	sort.Strings(lines)
	if len(lines) > 0 {
		b.WriteString("\n\nServers:\n" + strings.Join(lines, "\n"))
	}
	return b.String()
}

func (g *Gateway) newServer(id string, step *exposure.Step) *mcp.Server {
	opts := &mcp.ServerOptions{
		Instructions: instructions(step),
		Logger:       slogbridge.NewChatty(g.log.Named("sdk")),
		GetSessionID: func() string { return id },
	}
	g.offerOptions(opts)
	s := mcp.NewServer(g.impl, opts)
	s.AddReceivingMiddleware(recordNegotiatedVersion, capToolsListPage(MaxToolsListPageBytes))
	s.AddSendingMiddleware(sendVerbatim)
	return s
}

// sessionCapabilities are what every upstream session offers.
func sessionCapabilities() *mcp.ServerCapabilities {
	return &mcp.ServerCapabilities{
		Logging: &mcp.LoggingCapabilities{},
		Tools:   &mcp.ToolCapabilities{ListChanged: true},
	}
}

// handshakeVersion is the newest version the initialize handshake can
// negotiate: later versions are negotiated with server/discover.
var handshakeVersion = func() string {
	for _, v := range mcp.SupportedProtocolVersions() { // newest first
		if v < mcpclient.ModernVersion {
			return v
		}
	}
	return mcpclient.LegacyVersion
}()

// recordNegotiatedVersion makes an initialize request that asks for
// 2026-07-28 or later record the version it will get instead. The
// handshake never negotiates those (go-sdk answers handshakeVersion), but
// go-sdk and speaksRounds read the session's protocol from its
// InitializeParams: a client that offered a newer version would be sent
// input-required results it cannot read, and no elicitation/create.
func recordNegotiatedVersion(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if r, ok := req.(*mcp.ServerRequest[*mcp.InitializeParams]); ok && r.Params != nil && r.Params.ProtocolVersion > handshakeVersion {
			r.Params.ProtocolVersion = handshakeVersion
		}
		return next(ctx, method, req)
	}
}
