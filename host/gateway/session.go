package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host"
	"github.com/toolgate/toolgate/host/execution"
	"github.com/toolgate/toolgate/host/exposure"
	"github.com/toolgate/toolgate/host/identity"
	"github.com/toolgate/toolgate/host/pipeline"
)

// noticeBuffer is how many log messages not tied to a call may wait for
// an upstream session; beyond it they are dropped (and counted in the
// log), so a chatty server cannot grow memory without bound.
const noticeBuffer = 64

// session is one upstream MCP session: its own go-sdk server (so its tool
// list can differ from other sessions' once tool_search found tools), its
// own approval session (session memory, audit session id = id) and the
// calls it has in flight.
type session struct {
	g      *Gateway
	h      *host.Host
	id     string
	log    hclog.Logger
	server *mcp.Server
	// ctx ends with the session; it bounds the notice pump.
	ctx    context.Context
	cancel context.CancelFunc
	// idle ends an HTTP session without requests; nil for stdio. Set
	// before the session is registered, then read-only.
	idle *idleTimer
	// caller is who opened the session (serve with auth); nil otherwise.
	// Set before the session is registered, then read-only.
	caller *identity.Caller
	// modernKey names the caller's client of a 2026-07-28 session over
	// HTTP, which has no go-sdk session of its own (modern.go); "" for
	// every other session. Set before the session is registered.
	modernKey string
	// clientInfo caches the upstream client's initialize clientInfo
	// (see client).
	clientInfo atomic.Pointer[identity.Client]
	// notices are log messages for this session that belong to no call.
	notices chan *mcp.LoggingMessageParams
	ended   chan struct{} // closed by end, once
	// listed is set once a list request waited for servers still
	// starting (awaitFirstList): later lists answer at once.
	listed atomic.Bool

	// startMu guards the "upstream session started" line: logged once,
	// when the client has named itself (logStarted).
	startMu      sync.Mutex
	startPending bool // bind ran before initialize
	startLogged  bool

	// refreshMu serializes changes of the tool list.
	refreshMu sync.Mutex

	mu     sync.Mutex
	ss     *mcp.ServerSession // nil until bind
	step   *exposure.Step
	plan   *catalogPlan
	served map[string]*servedTool // what server holds, by upstream name
	// withdrawn are tools this session served that are gone from its list
	// (their server went down, or stopped listing them), by upstream name.
	withdrawn map[string]*servedTool
	revealed  map[string]bool    // model names tool_search found in this session
	calls     map[*call]struct{} // calls running their step
	waiting   map[string]*call   // calls a 2026-07-28 client must resume, by requestState
	done      bool

	// offers are the resources, templates and prompts the session's
	// server holds, and its subscriptions (resources.go).
	offers sessionOffers
}

func newSession(g *Gateway, h *host.Host) *session {
	id := exposure.NewID("session")
	ctx, cancel := context.WithCancel(g.ctx)
	s := &session{
		g: g, h: h, id: id,
		log:       g.log.With("session", id),
		ctx:       ctx,
		cancel:    cancel,
		notices:   make(chan *mcp.LoggingMessageParams, noticeBuffer),
		ended:     make(chan struct{}),
		step:      h.NewStep(id),
		revealed:  map[string]bool{},
		withdrawn: map[string]*servedTool{},
		calls:     map[*call]struct{}{},
		waiting:   map[string]*call{},
	}
	s.server = g.newServer(id, s.step)
	s.server.AddReceivingMiddleware(s.answerDownTools, s.awaitFirstList, s.logOnInitialize)
	return s
}

// client is the upstream client as it named itself in initialize, for
// the audit records of its requests; nil before initialize.
func (s *session) client() *identity.Client {
	if c := s.clientInfo.Load(); c != nil {
		return c
	}
	s.mu.Lock()
	ss := s.ss
	s.mu.Unlock()
	if ss == nil {
		return nil
	}
	p := ss.InitializeParams()
	if p == nil || p.ClientInfo == nil {
		return nil
	}
	c := &identity.Client{Name: p.ClientInfo.Name, Version: p.ClientInfo.Version}
	s.clientInfo.Store(c)
	return c
}

// awaitFirstList holds the session's first tools/list (or resources,
// templates or prompts list) until every enabled server ended its first
// start, or serve { initial_list_wait } elapsed, whichever comes first.
// A client that lists once (a script, `inspector --cli`) then sees the
// servers that start quickly, not only those that happened to be ready;
// a slow one still joins later with list_changed. A client that calls
// before it lists (a tool it does not have yet, a prompt, a resource,
// a subscription, a completion)
// waits the same way once, or its first call would be refused as
// unknown.
//
// Every list, and every call of a name the session does not hold, also
// brings the session up to date with the catalog first: the catalog
// follower refreshes sessions in the background, and a server that
// became ready an instant earlier must be in the answer.
func (s *session) awaitFirstList(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/call":
			if r, ok := req.(*mcp.ServerRequest[*mcp.CallToolParamsRaw]); ok && r.Params != nil {
				s.mu.Lock()
				_, served := s.served[r.Params.Name]
				s.mu.Unlock()
				if served {
					break
				}
			}
			fallthrough
		case "tools/list", "resources/list", "resources/templates/list", "prompts/list",
			"prompts/get", "resources/read", "resources/subscribe", "completion/complete":
			if !s.listed.Load() {
				s.awaitServers(ctx, method)
				s.listed.Store(true)
			}
			s.refresh()
		}
		return next(ctx, method, req)
	}
}

func (s *session) awaitServers(ctx context.Context, method string) {
	wait := s.h.Config().Serve.InitialListWait
	if wait <= 0 || !s.h.Manager.Settling() {
		return
	}
	s.log.Debug("the first list waits for servers still starting", "method", method, "initial_list_wait", wait)
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)() // nor past the session's end
	if err := s.h.Manager.WaitSettled(ctx); err != nil {
		// Not an error for the client: the list has what is ready, and
		// the rest follows with list_changed.
		s.log.Debug("answering the first list before every server started", "method", method, "reason", err)
	}
}

// answerDownTools answers a tools/call for a tool this session served
// until its server went down, which go-sdk would otherwise refuse as an
// unknown tool: the model gets a tool error it can act on. Names the
// session never served stay unknown.
func (s *session) answerDownTools(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		r, ok := req.(*mcp.ServerRequest[*mcp.CallToolParamsRaw])
		if !ok || r.Params == nil {
			return next(ctx, method, req)
		}
		s.mu.Lock()
		t := s.withdrawn[r.Params.Name]
		s.mu.Unlock()
		if t == nil || t.server == "" {
			return next(ctx, method, req)
		}
		err := s.h.Manager.NotReady(t.server)
		if err == nil {
			// Back up: the catalog follower may not have refreshed this
			// session yet. If the server lists the tool again, it is
			// registered before go-sdk looks it up; if not, it is unknown.
			s.refresh()
			return next(ctx, method, req)
		}
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
			Text: "tool call error: " + (&execution.CallError{Server: t.server, Tool: t.raw, Err: err}).Error()}}}, nil
	}
}

// bind attaches the connected go-sdk session and starts serving it until
// it ends.
func (s *session) bind(ss *mcp.ServerSession) {
	s.mu.Lock()
	s.ss = ss
	s.mu.Unlock()
	if !s.g.register(s) {
		s.end()
		return
	}
	// The catalog may have changed between newSession and now.
	s.refresh()
	s.logStarted(ss.InitializeParams())
	s.g.wg.Add(2)
	go func() {
		defer s.g.wg.Done()
		_ = ss.Wait()
		s.end()
	}()
	go s.pumpNotices(ss)
}

// logStarted logs "upstream session started" with the client's name
// once the client named itself. Over HTTP bind runs after initialize; on
// stdio before it, so there the line waits for the initialize request
// (logOnInitialize). p is nil when called before initialize.
func (s *session) logStarted(p *mcp.InitializeParams) {
	s.startMu.Lock()
	defer s.startMu.Unlock()
	if s.startLogged {
		return
	}
	if p == nil {
		s.startPending = true
		return
	}
	s.startLogged = true
	client := ""
	if p.ClientInfo != nil {
		client = p.ClientInfo.Name
	}
	s.log.Info("upstream session started", "client", client, "protocol", p.ProtocolVersion)
}

// logOnInitialize logs the session's start after the request that made
// the client name itself (initialize, or server/discover under
// 2026-07-28) when bind could not (stdio).
func (s *session) logOnInitialize(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		s.startMu.Lock()
		pending := s.startPending
		s.startMu.Unlock()
		if !pending {
			return res, err
		}
		s.mu.Lock()
		ss := s.ss
		s.mu.Unlock()
		if ss != nil {
			if p := ss.InitializeParams(); p != nil {
				s.logStarted(p)
			}
		}
		return res, err
	}
}

// end closes the session once: its go-sdk session, its calls, and what
// the approval procedure remembered for it.
func (s *session) end() {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return
	}
	s.done = true
	ss := s.ss
	calls := make([]*call, 0, len(s.calls)+len(s.waiting))
	for c := range s.calls {
		calls = append(calls, c)
	}
	for _, c := range s.waiting {
		calls = append(calls, c)
	}
	s.waiting = map[string]*call{}
	s.mu.Unlock()

	s.cancel()
	if s.idle != nil {
		s.idle.stop()
	}
	for _, c := range calls {
		c.abort()
	}
	if ss != nil {
		_ = ss.Close()
	}
	s.g.unregister(s)
	s.g.dropSubscriptions(s)
	s.h.Approval().ForgetSession(s.id)
	if ss != nil || s.modernKey != "" { // a handshake that failed opened no session
		s.log.Info("upstream session ended")
	}
	close(s.ended)
}

// refresh brings the session's tool list up to date with the catalog.
// Changing the go-sdk server's tools makes it send
// notifications/tools/list_changed to the client.
func (s *session) refresh() {
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	s.syncOffers()
	s.mu.Lock()
	step, plan := s.step, s.plan
	s.mu.Unlock()
	if plan != nil {
		if step.Revision() == s.h.Manager.Revision() {
			return
		}
		step = s.h.NewStep(s.id)
	}
	s.apply(step, s.g.planFor(step))
}

// reveal makes tools found by tool_search callable in this session and
// adds them to its list. Clients that ignore list_changed can call them
// by name all the same: they are registered at once.
func (s *session) reveal(found []*exposure.Tool) {
	if len(found) == 0 {
		return
	}
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	s.mu.Lock()
	for _, t := range found {
		s.revealed[t.ModelName] = true
	}
	step, plan := s.step, s.plan
	s.mu.Unlock()
	s.apply(step, plan)
}

// apply makes the go-sdk server hold plan's tools for this session.
// Called with refreshMu held.
func (s *session) apply(step *exposure.Step, plan *catalogPlan) {
	s.mu.Lock()
	old := s.served
	revealed := maps.Clone(s.revealed)
	s.mu.Unlock()

	want := make(map[string]*servedTool, len(plan.tools))
	for name, t := range plan.tools {
		if !t.deferred || revealed[t.modelName] {
			want[name] = t
		}
	}
	var gone []string
	for name := range old {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		s.server.RemoveTools(gone...)
	}
	for name, t := range want {
		if o, ok := old[name]; ok && sameSpec(o, t) {
			continue
		}
		if err := addTool(s.server, t.spec, s.handle); err != nil {
			s.g.warns.Warn(s.log, "not serving a tool", "tool", name, "reason", err)
			delete(want, name)
		}
	}
	s.mu.Lock()
	s.step, s.plan, s.served = step, plan, want
	for name, t := range old {
		if _, ok := want[name]; !ok {
			s.withdrawn[name] = t
		}
	}
	for name := range want {
		delete(s.withdrawn, name)
	}
	s.mu.Unlock()
}

// handle is the go-sdk tool handler of every tool of the session.
func (s *session) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	growStack(0) // a call runs here (runHere): see callStackBytes
	p := req.Params
	if p.RequestState != "" {
		return s.resume(ctx, req)
	}
	s.mu.Lock()
	t, ok := s.served[p.Name]
	step := s.step
	s.mu.Unlock()
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", p.Name)}
	}
	if err := checkArguments(p.Arguments); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	c, callCtx, cr := s.start(ctx, req, t)
	if c == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the upstream session is closing"}
	}
	if !c.inputViaRounds {
		return c.runHere(ctx, callCtx, step, cr)
	}
	go c.run(callCtx, step, cr)
	return c.round(ctx)
}

// resume continues a call of a 2026-07-28 client that came back with the
// input it was asked for.
func (s *session) resume(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	state := req.Params.RequestState
	s.mu.Lock()
	c := s.waiting[state]
	if c != nil && c.tool.name == req.Params.Name {
		delete(s.waiting, state)
	} else {
		c = nil
	}
	s.mu.Unlock()
	if c == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
			"unknown requestState %q for tool %q: the call it belonged to ended, or waited longer than toolgate allows; call the tool again",
			state, req.Params.Name)}
	}
	c.answer(req.Params.InputResponses, req.Params.GetProgressToken(), req.Session)
	return c.round(ctx)
}

func isNull(raw json.RawMessage) bool {
	trimmed := strings.TrimSpace(string(raw))
	return trimmed == "" || trimmed == "null"
}

// checkArguments accepts what tools/call may carry as arguments: nothing,
// null, or a JSON object. It looks at the shape only: go-sdk decoded the
// params, so raw is well-formed JSON, and the step validates it once more
// for every caller (execution.ParseArguments); a third pass over large
// arguments would cost the call (issue 30).
func checkArguments(raw json.RawMessage) error {
	if isNull(raw) || strings.HasPrefix(strings.TrimSpace(string(raw)), "{") {
		return nil
	}
	return fmt.Errorf("invalid params: tool arguments must be a JSON object")
}

// awaitResume records c as waiting for its client to come back.
func (s *session) awaitResume(c *call) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return false
	}
	s.waiting[c.id] = c
	return true
}

// forgetWaiting drops c from the calls awaiting their client.
func (s *session) forgetWaiting(c *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiting[c.id] == c {
		delete(s.waiting, c.id)
	}
}

// upstream is the pipeline.Upstream of call c: the call itself, behind
// the held-approval inbox when serve has one (it takes the approval
// question when the client cannot answer it, or a route sends it there).
func (s *session) upstream(c *call) pipeline.Upstream {
	if in := s.g.opts.Inbox; in != nil {
		return in.Wrap(c)
	}
	return c
}

// notice queues a log message that belongs to no call.
func (s *session) notice(p *mcp.LoggingMessageParams) {
	if s.modernKey != "" {
		return // no stream outside a request to send it on
	}
	select {
	case s.notices <- p:
	default:
		s.log.Debug("dropping a server log message: the upstream client is not reading fast enough")
	}
}

// pumpNotices forwards queued log messages to the client until the
// session ends. go-sdk drops them unless the client set a log level.
func (s *session) pumpNotices(ss *mcp.ServerSession) {
	defer s.g.wg.Done()
	for {
		select {
		case <-s.ctx.Done():
			return
		case p := <-s.notices:
			ctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
			if err := ss.Log(ctx, p); err != nil {
				s.log.Debug("forwarding a server log message failed", "error", err)
			}
			cancel()
		}
	}
}

// cannotSample says why this session's client cannot answer a server's
// sampling request p; "" means it can.
func (s *session) cannotSample(ss *mcp.ServerSession, p *mcp.CreateMessageWithToolsParams) string {
	client := "the MCP client"
	var caps *mcp.ClientCapabilities
	if ip := ss.InitializeParams(); ip != nil {
		caps = ip.Capabilities
		if ip.ClientInfo != nil && ip.ClientInfo.Name != "" {
			client = fmt.Sprintf("the MCP client %q", ip.ClientInfo.Name)
		}
	}
	if caps == nil || caps.Sampling == nil {
		return client + " connected to toolgate serve does not support sampling (it declared no sampling capability), " +
			"so toolgate cannot forward this server's sampling/createMessage; use a client that supports sampling, " +
			"or set forward_sampling = false in this server's block so that the server is not offered sampling"
	}
	if len(p.Tools) > 0 && caps.Sampling.Tools == nil {
		return client + " connected to toolgate serve does not support tools in sampling requests"
	}
	return ""
}

// cannotAsk says why this session's client cannot answer an elicitation
// of the given mode ("form" or "url"); "" means it can.
func (s *session) cannotAsk(ss *mcp.ServerSession, mode string) string {
	client := "the MCP client"
	var caps *mcp.ClientCapabilities
	if p := ss.InitializeParams(); p != nil {
		caps = p.Capabilities
		if p.ClientInfo != nil && p.ClientInfo.Name != "" {
			client = fmt.Sprintf("the MCP client %q", p.ClientInfo.Name)
		}
	}
	if caps == nil || caps.Elicitation == nil {
		return client + " connected to toolgate serve does not support elicitation, so toolgate cannot ask you through it"
	}
	e := caps.Elicitation
	switch mode {
	case "url":
		if e.URL == nil {
			return client + " connected to toolgate serve does not support URL elicitation"
		}
	default:
		// Neither form nor url declared means form, for older clients.
		if e.Form == nil && e.URL != nil {
			return client + " connected to toolgate serve does not support form elicitation, so toolgate cannot ask you through it"
		}
	}
	return ""
}
