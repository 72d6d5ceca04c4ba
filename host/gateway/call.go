package gateway

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/execution"
	"github.com/toolgate/toolgate/host/exposure"
	"github.com/toolgate/toolgate/host/identity"
)

// errCallEnded answers input requests that arrive after their call ended.
var errCallEnded = errors.New("the tool call already ended")

// call is one upstream tools/call.
//
// For a client older than 2026-07-28 the step runs on go-sdk's request
// goroutine (runHere): a plain call costs no goroutine and no hand-off
// of its own. What the call produces meanwhile (progress, log messages,
// input requests) is forwarded by a goroutine started on the first of
// them (startForwarding), which ends with the call.
//
// For a 2026-07-28 client the step runs on its own goroutine (run), so
// that the request handler (a "round") can end with an input-required
// result while the call goes on; the call then waits for the client to
// come back with the same requestState, which starts the next round.
type call struct {
	s    *session
	id   string // the requestState handed to a 2026-07-28 client; "" for older clients
	tool *servedTool
	ss   *mcp.ServerSession
	// inputViaRounds: the client speaks 2026-07-28 or later, so input the
	// call needs (an approval form) goes back as an input-required result
	// answered in the next round; otherwise it is an elicitation request
	// sent while the call stays open.
	inputViaRounds bool
	// stopped is the Done channel of the call's context.
	stopped <-chan struct{}
	cancel  context.CancelFunc
	// inFlight ends the call's count in the gateway's work in flight.
	inFlight func()
	wake     chan struct{} // capacity 1: something was queued for the client
	done     chan struct{} // closed once result is set; nil for a call run in place

	// ctx is the context of a call run in place (runHere), which its
	// forwarder sends under; nil for a 2026-07-28 client's call.
	ctx context.Context
	// asking counts the input requests the forwarder of a call run in
	// place has put to its client and not yet seen answered.
	asking sync.WaitGroup

	// cut is set when shutdown cut the call off (see Gateway.cutCalls).
	cut atomic.Bool

	mu sync.Mutex
	// token is the progress token of the request serving the call now;
	// nil = no progress wanted. Each round of a 2026-07-28 client is a
	// request of its own, with its own token.
	token any
	// via is the go-sdk session of the request serving the call now,
	// when it is not ss: over HTTP each round of a 2026-07-28 client
	// comes on a go-sdk session of its own (modern.go).
	via      *mcp.ServerSession
	finished bool
	result   *mcp.CallToolResult
	err      error
	progress []*mcp.ProgressNotificationParams
	logs     []*mcp.LoggingMessageParams
	// droppedProgress and droppedLogs count what the bounds dropped
	// since the last flush, which logs them.
	droppedProgress int
	droppedLogs     int
	inputs          []*input          // queued, not yet put to the client
	asked           map[string]*input // put to a 2026-07-28 client, by key
	nextInput       int
	abandon         *time.Timer
	// quit and forwarded are the forwarder of a call run in place: quit
	// stops it, forwarded is closed when it returned. nil until it starts.
	quit, forwarded chan struct{}
}

// input is one request for the upstream client: an elicitation
// (*mcp.ElicitParams) or a forwarded sampling request
// (*mcp.CreateMessageWithToolsParams).
type input struct {
	key    string
	params mcp.InputRequest
	reply  chan inputReply // capacity 1
}

type inputReply struct {
	res mcp.InputResponse
	err error
}

// start registers the call and returns it with its context and step
// request. It returns a nil call when the session is closing.
func (s *session) start(ctx context.Context, req *mcp.CallToolRequest, t *servedTool) (*call, context.Context, exposure.CallRequest) {
	rounds := speaksRounds(req.Session)
	var (
		callCtx context.Context
		cancel  context.CancelFunc
	)
	if rounds {
		// The call outlives one request of a 2026-07-28 client, so its
		// context does not end with the request; each round ties them
		// again.
		callCtx, cancel = context.WithCancel(context.WithoutCancel(ctx))
	} else {
		// The call runs on its request: cancelling the request cancels
		// the call.
		callCtx, cancel = context.WithCancel(ctx)
	}
	id := ""
	if rounds {
		// Only a 2026-07-28 client is ever handed a requestState; the
		// random id costs a getrandom call, skipped for older clients.
		id = exposure.NewID("state")
	}
	c := &call{
		s:              s,
		id:             id,
		tool:           t,
		ss:             req.Session,
		inputViaRounds: rounds,
		token:          req.Params.GetProgressToken(),
		cancel:         cancel,
		wake:           make(chan struct{}, 1),
	}
	if rounds {
		c.done = make(chan struct{})
	}
	callCtx = identity.With(callCtx, s.caller)
	callCtx = identity.WithClient(callCtx, s.client())
	callCtx = events.WithTraceParent(callCtx, traceParent(req))
	c.stopped = callCtx.Done()
	if !rounds {
		c.ctx = callCtx
	}

	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		cancel()
		return nil, nil, exposure.CallRequest{}
	}
	s.calls[c] = struct{}{}
	// Added under s.mu: end sets done under it before the gateway waits.
	s.g.wg.Add(1)
	s.mu.Unlock()
	c.inFlight = s.g.ops.track() // Drain waits for the call

	// The call is the step's Upstream: the approval question, the
	// server's input requests, log messages and progress come back to it.
	cr := exposure.CallRequest{Name: t.modelName, Arguments: req.Params.Arguments, Upstream: s.upstream(c)}
	if isNull(cr.Arguments) {
		// Clients send "arguments": null for "no arguments".
		cr.Arguments = nil
	}
	return c, callCtx, cr
}

// speaksRounds reports whether ss's client takes input-required results
// (2026-07-28 and later), the way go-sdk decides it.
func speaksRounds(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	return p == nil || p.ProtocolVersion >= "2026-07-28"
}

// run is the goroutine of a 2026-07-28 client's call: it runs the step
// and hands the answer to the round serving the call then.
func (c *call) run(ctx context.Context, step *exposure.Step, req exposure.CallRequest) {
	growStack(0)
	defer c.s.g.wg.Done()
	defer c.inFlight()
	defer c.cancel()
	c.finish(c.execute(ctx, step, req))
}

// runHere runs the call of a client older than 2026-07-28 on its
// request's goroutine (reqCtx is the request's context, ctx the call's)
// and answers it. What is still queued for the client when the step
// returns is sent before the answer, as a round does.
func (c *call) runHere(reqCtx, ctx context.Context, step *exposure.Step, req exposure.CallRequest) (*mcp.CallToolResult, error) {
	defer c.s.g.wg.Done()
	defer c.inFlight()
	defer c.cancel()
	res, err := c.execute(ctx, step, req)
	c.finish(res, err)
	c.mu.Lock()
	quit, forwarded := c.quit, c.forwarded
	c.mu.Unlock()
	if quit != nil {
		close(quit)
		<-forwarded
		c.flush(reqCtx, &c.asking)
	}
	// Input requests still put to the client end with the call.
	c.cancel()
	c.asking.Wait()
	if err := reqCtx.Err(); err != nil && !c.cut.Load() {
		return nil, err
	}
	return res, err
}

// execute runs the call's step and unregisters the call.
func (c *call) execute(ctx context.Context, step *exposure.Step, req exposure.CallRequest) (res *mcp.CallToolResult, err error) {
	func() {
		defer func() {
			if r := recover(); r != nil {
				c.s.log.Error("tool call panicked", "tool", c.tool.name, "panic", r, "stack", string(debug.Stack()))
				res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "toolgate failed while running this call; see its log"}
			}
		}()
		out := step.Call(ctx, req)
		res = c.s.limitResult(c.tool.name, c.s.upstreamResult(out))
	}()
	if c.cut.Load() {
		res, err = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: ShutdownCutText}}}, nil
	}
	c.s.mu.Lock()
	delete(c.s.calls, c)
	c.s.mu.Unlock()
	return res, err
}

// upstreamResult is what the client receives for a finished step call:
// the server's own result untouched, or the isError result of a call the
// host ended (denial, failure). The one key dropped is the downstream
// server's serverInfo, which would misname who answered.
func (s *session) upstreamResult(out exposure.CallResult) *mcp.CallToolResult {
	res := out.Raw
	if res == nil {
		res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "toolgate: the call ended without a result"}}}
	}
	if _, ok := res.Meta[mcp.MetaKeyServerInfo]; ok {
		r := *res
		r.Meta = make(mcp.Meta, len(res.Meta))
		for k, v := range res.Meta {
			if k != mcp.MetaKeyServerInfo {
				r.Meta[k] = v
			}
		}
		res = &r
	}
	if len(out.Found) > 0 {
		s.reveal(out.Found)
		res = s.renameFound(res)
	}
	return res
}

// limitResult answers a result larger than serve's max_result_bytes with
// a tool error that says so, before go-sdk encodes it (several copies of
// its size). The server ran the call; the audit log has its result.
func (s *session) limitResult(tool string, res *mcp.CallToolResult) *mcp.CallToolResult {
	limit := s.h.Config().Serve.MaxResultBytes
	if limit <= 0 {
		limit = config.DefaultMaxResultBytes
	}
	size := execution.ResultSize(res)
	if size <= limit {
		return res
	}
	s.g.warns.Warn(s.log, "a tool result is larger than serve's max_result_bytes; the client gets a tool error instead",
		"tool", tool, "result_bytes", size, "max_result_bytes", limit)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(
		"toolgate: the result of %s is %d bytes of JSON, more than the gateway passes on (max_result_bytes = %d). "+
			"The tool ran; only its result was withheld. Call it for less (a smaller range, page or limit), "+
			"or raise max_result_bytes in the serve block of the toolgate configuration.",
		tool, size, limit)}}}
}

func (c *call) finish(res *mcp.CallToolResult, err error) {
	c.mu.Lock()
	c.finished = true
	c.result, c.err = res, err
	c.mu.Unlock()
	if c.done != nil {
		close(c.done)
	}
}

// queued is called with c.mu held once something was queued for the
// client. For a call run in place it prepares the forwarder when there
// is none yet and the call still runs, and then returns true: the caller
// starts it (startForwarding) after unlocking.
func (c *call) queued() bool {
	if c.ctx == nil || c.quit != nil || c.finished {
		return false
	}
	c.quit, c.forwarded = make(chan struct{}), make(chan struct{})
	return true
}

// poke wakes whoever forwards for the call, starting the forwarder of a
// call run in place when queued said so.
func (c *call) poke(start bool) {
	if start {
		go c.forward()
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// forward is the forwarder of a call run in place: it sends what the
// call queues until runHere stops it.
func (c *call) forward() {
	defer close(c.forwarded)
	for {
		select {
		case <-c.wake:
			c.flush(c.ctx, &c.asking)
		case <-c.quit:
			return
		}
	}
}

// queueProgress runs on the downstream connection's read path, so it
// only queues; the round (or the forwarder) sends, under the token of
// the request serving the call.
func (c *call) queueProgress(p *mcp.ProgressNotificationParams) {
	fwd := *p
	c.mu.Lock()
	c.progress = appendBounded(c.progress, &fwd, maxQueuedProgress, &c.droppedProgress)
	start := c.queued()
	c.mu.Unlock()
	c.poke(start)
}

func (c *call) queueLog(p *mcp.LoggingMessageParams) {
	c.mu.Lock()
	c.logs = appendBounded(c.logs, p, maxQueuedLogs, &c.droppedLogs)
	start := c.queued()
	c.mu.Unlock()
	c.poke(start)
}

// appendBounded appends v to q, dropping (and counting) the oldest entry
// when q holds limit already: a server that reports faster than the
// client reads costs a bounded queue, and the newest progress is the one
// worth keeping.
func appendBounded[T any](q []T, v T, limit int, dropped *int) []T {
	if len(q) >= limit {
		n := len(q) - limit + 1
		*dropped += n
		q = append(q[:0], q[n:]...)
	}
	return append(q, v)
}

// ask puts one request to the upstream client and waits for the answer,
// for ctx, or for the call to end.
func (c *call) ask(ctx context.Context, params mcp.InputRequest) (mcp.InputResponse, error) {
	in := &input{params: params, reply: make(chan inputReply, 1)}
	c.mu.Lock()
	if c.finished {
		c.mu.Unlock()
		return nil, errCallEnded
	}
	c.nextInput++
	in.key = "toolgate_input_" + strconv.Itoa(c.nextInput)
	c.inputs = append(c.inputs, in)
	start := c.queued()
	c.mu.Unlock()
	c.poke(start)
	select {
	case r := <-in.reply:
		return r.res, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.stopped:
		return nil, context.Canceled
	}
}

// elicit asks the upstream client to fill in a form or visit a URL.
func (c *call) elicit(ctx context.Context, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	res, err := c.ask(ctx, params)
	if err != nil {
		return nil, err
	}
	r, _ := res.(*mcp.ElicitResult)
	if r == nil {
		r = &mcp.ElicitResult{Action: "cancel"}
	}
	return r, nil
}

// cutForShutdown cancels the call and makes its answer ShutdownCutText.
func (c *call) cutForShutdown() {
	c.cut.Store(true)
	c.abort()
}

// abort cancels the call and forgets any wait for its client.
func (c *call) abort() {
	c.mu.Lock()
	if c.abandon != nil {
		c.abandon.Stop()
		c.abandon = nil
	}
	c.mu.Unlock()
	c.cancel()
}

// answer hands a 2026-07-28 client's responses to the questions of the
// last round; what the call reports from now on goes to the retry
// request, under its progress token. A question left unanswered counts
// as cancelled.
func (c *call) answer(responses mcp.InputResponseMap, token any, ss *mcp.ServerSession) {
	c.mu.Lock()
	c.token = token
	if ss != c.ss {
		c.via = ss
	}
	asked := c.asked
	c.asked = nil
	if c.abandon != nil {
		c.abandon.Stop()
		c.abandon = nil
	}
	c.mu.Unlock()
	for key, in := range asked {
		in.reply <- unanswered(in, responses[key])
	}
}

// unanswered turns a 2026-07-28 client's response to in into its reply:
// a missing or mistyped elicitation answer counts as cancelled, a
// missing sampling answer is an error.
func unanswered(in *input, res mcp.InputResponse) inputReply {
	switch in.params.(type) {
	case *mcp.ElicitParams:
		if r, ok := res.(*mcp.ElicitResult); ok && r != nil {
			return inputReply{res: r}
		}
		return inputReply{res: &mcp.ElicitResult{Action: "cancel"}}
	default:
		if r, ok := res.(*mcp.CreateMessageWithToolsResult); ok && r != nil {
			return inputReply{res: r}
		}
		return inputReply{err: errors.New("the MCP client came back without an answer to the sampling request")}
	}
}

// round serves one upstream request of the call: it forwards what the
// call queues until the call ends, or (2026-07-28) until the client must
// be asked for input. Cancelling the request cancels the call.
func (c *call) round(ctx context.Context) (*mcp.CallToolResult, error) {
	stop := context.AfterFunc(ctx, c.cancel)
	defer stop()
	// Legacy elicitations run beside the round and end with it.
	rctx, rcancel := context.WithCancel(ctx)
	var asking sync.WaitGroup
	defer asking.Wait()
	defer rcancel()
	for {
		select {
		case <-c.wake:
			if res := c.flush(rctx, &asking); res != nil {
				if !stop() {
					return nil, ctx.Err()
				}
				return res, nil
			}
		case <-c.done:
			c.flush(rctx, &asking)
			c.s.forgetWaiting(c)
			c.mu.Lock()
			res, err := c.result, c.err
			c.mu.Unlock()
			return res, err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// flush sends what was queued for the client. For a 2026-07-28 client
// with questions pending it returns the input-required result that ends
// the round; otherwise nil.
func (c *call) flush(ctx context.Context, asking *sync.WaitGroup) *mcp.CallToolResult {
	c.mu.Lock()
	progress, logs, inputs := c.progress, c.logs, c.inputs
	c.progress, c.logs, c.inputs = nil, nil, nil
	finished, token := c.finished, c.token
	ss := c.ss
	if c.via != nil {
		ss = c.via
	}
	droppedProgress, droppedLogs := c.droppedProgress, c.droppedLogs
	c.droppedProgress, c.droppedLogs = 0, 0
	c.mu.Unlock()

	if droppedProgress+droppedLogs > 0 {
		c.s.g.warns.Warn(c.s.log, "dropped the oldest queued notifications of a call: the upstream client is not reading fast enough",
			"tool", c.tool.name, "progress_dropped", droppedProgress, "log_messages_dropped", droppedLogs)
	}

	for _, p := range progress {
		if token == nil {
			break // this round's request asked for no progress
		}
		p.ProgressToken = token
		if err := ss.NotifyProgress(ctx, p); err != nil {
			c.s.log.Debug("forwarding progress failed", "tool", c.tool.name, "error", err)
		}
	}
	for _, l := range logs {
		if err := ss.Log(ctx, l); err != nil {
			c.s.log.Debug("forwarding a server log message failed", "tool", c.tool.name, "error", err)
		}
	}
	if len(inputs) == 0 {
		return nil
	}
	if finished {
		for _, in := range inputs {
			in.reply <- inputReply{err: errCallEnded}
		}
		return nil
	}
	if !c.inputViaRounds {
		for _, in := range inputs {
			asking.Add(1)
			go func() {
				defer asking.Done()
				res, err := c.send(ctx, in.params)
				in.reply <- inputReply{res: res, err: err}
			}()
		}
		return nil
	}

	c.mu.Lock()
	if c.asked == nil {
		c.asked = map[string]*input{}
	}
	requests := make(mcp.InputRequestMap, len(c.asked)+len(inputs))
	for _, in := range inputs {
		c.asked[in.key] = in
	}
	for key, in := range c.asked {
		requests[key] = in.params
	}
	c.abandon = time.AfterFunc(c.s.g.opts.InputTimeout, func() {
		c.s.g.warns.Warn(c.s.log, "the upstream client did not come back with the input it was asked for; cancelling the call",
			"tool", c.tool.name, "after", c.s.g.opts.InputTimeout)
		c.s.forgetWaiting(c)
		c.cancel()
	})
	c.mu.Unlock()
	if !c.s.awaitResume(c) {
		c.cancel()
		return nil
	}
	return &mcp.CallToolResult{InputRequests: requests, RequestState: c.id}
}

// send puts one request to a pre-2026-07-28 client as a request of its
// own while the call stays open.
func (c *call) send(ctx context.Context, params mcp.InputRequest) (mcp.InputResponse, error) {
	switch p := params.(type) {
	case *mcp.ElicitParams:
		return elicitVerbatim(ctx, c.ss, p)
	case *mcp.CreateMessageWithToolsParams:
		return c.ss.CreateMessageWithTools(ctx, p)
	default:
		return nil, fmt.Errorf("toolgate cannot forward a %T to the MCP client", params)
	}
}

// verbatimKey carries, in the context of ServerSession.Elicit, the
// elicitation that sendVerbatim puts on the wire in place of the one
// go-sdk was given.
type verbatimKey struct{}

// elicitVerbatim sends params to the client as they are and returns its
// answer unchecked. ServerSession.Elicit checks an accepted answer
// against the requested schema with a validator stricter than the
// specification (it refuses SEP-1330's titled multi-select), so a form
// the downstream server wrote would fail after the user filled it in.
// The server that asked checks the answer itself. go-sdk is given the
// elicitation without its schema, so it checks nothing, and
// sendVerbatim (sending middleware of every upstream session) puts the
// real one on the wire.
func elicitVerbatim(ctx context.Context, ss *mcp.ServerSession, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if params.RequestedSchema == nil {
		return ss.Elicit(ctx, params)
	}
	bare := *params
	bare.RequestedSchema = nil
	if bare.Mode == "" && bare.URL == "" {
		bare.Mode = "form" // as go-sdk infers it from the real params
	}
	return ss.Elicit(context.WithValue(ctx, verbatimKey{}, params), &bare)
}

// sendVerbatim is the sending middleware half of elicitVerbatim.
func sendVerbatim(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if real, ok := ctx.Value(verbatimKey{}).(*mcp.ElicitParams); ok && method == "elicitation/create" {
			// ServerSession.Elicit builds its request with the params
			// as the Params interface.
			var sent *mcp.ElicitParams
			r, ok := req.(*mcp.ServerRequest[mcp.Params])
			if ok {
				sent, _ = r.Params.(*mcp.ElicitParams)
			}
			if sent == nil {
				// Never send the form without its schema.
				return nil, fmt.Errorf("toolgate cannot forward the elicitation: go-sdk sent it as %T", req)
			}
			fwd := *real
			fwd.Mode = sent.Mode
			r.Params = &fwd
		}
		return next(ctx, method, req)
	}
}
