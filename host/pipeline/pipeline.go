package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/execution"
	"github.com/toolgate/toolgate/host/identity"
)

// Kind is what a request asks of a server.
type Kind string

// The kinds of request. Each one's stages are [Kind.Stages].
const (
	ToolCall            Kind = "tool_call"
	Builtin             Kind = "builtin" // the host's own tools (tool_search, list_mcp_resources): no server is contacted
	ResourceRead        Kind = "resource_read"
	ResourceSubscribe   Kind = "resource_subscribe"
	ResourceUnsubscribe Kind = "resource_unsubscribe"
	PromptGet           Kind = "prompt_get"
	Completion          Kind = "completion"
	// Sampling and Elicitation are a server's sampling/createMessage and
	// elicitation/create forwarded to the upstream client of the call
	// they belong to (toolgate serve): no server is sent anything; the
	// request goes the other way.
	Sampling    Kind = "sampling"
	Elicitation Kind = "elicitation"
)

// Stage is one step of the pipeline; a Kind's stages are a set of them.
type Stage uint16

// The stages, in the order they run.
const (
	Begin Stage = 1 << iota
	Admit
	PreHooks
	Decide
	Freshness
	Execute
	PostHooks
	End
)

// Stages returns the stages that apply to requests of kind k. A tool call
// takes all of them. A built-in tool is admitted and audited, never put
// to hooks or approval: it is the host's own and contacts no server, but
// a client's tools/call of tool_search is still one of its requests, and
// a search may cost (an embeddings endpoint), so serve's limits count it.
// Resource reads, subscriptions, prompt gets
// and completions are admitted (rate limits) and audited but never put to
// approval: what a client may read is decided per server by
// enabled_resources / enabled_prompts, and per request by the hooks that
// declare PreResourceRead / PrePromptGet (the pre-hooks stage). A
// subscribe is asked as a read of its URI (a client that may not read a
// resource may not watch it either), a completion as a read of its
// resource template or a get of its prompt (whose arguments it would
// reveal), so a policy's resource, prompt and caller rules cover every
// kind that reaches a server. An unsubscribe only undoes what an admitted subscribe did, so
// it is never refused (nor audited).
func (k Kind) Stages() Stage {
	switch k {
	case ToolCall:
		return Admit | Begin | PreHooks | Decide | Freshness | Execute | PostHooks | End
	case Builtin:
		return Admit | Begin | Execute | End
	case ResourceRead, PromptGet, ResourceSubscribe, Completion:
		return Admit | Begin | PreHooks | Execute | End
	case Sampling, Elicitation:
		// Admitted by the door's own check (a call to belong to, a client
		// that can take it), not by serve's limits, which count the
		// clients' requests; never put to approval: the upstream client
		// is the one asked.
		return Admit | Begin | Execute | End
	case ResourceUnsubscribe:
		return Execute
	}
	return 0
}

// Has reports whether s includes stage t.
func (s Stage) Has(t Stage) bool { return s&t != 0 }

// Approver decides whether one tool call may run, and runs the hooks of
// resource reads and prompt gets (package approval).
type Approver interface {
	PreToolUse(ctx context.Context, r approval.Request, inputSchema any) (approval.Request, *approval.Decision)
	PreResourceRead(ctx context.Context, r approval.Request) *approval.Decision
	PrePromptGet(ctx context.Context, r approval.Request) *approval.Decision
	Decide(ctx context.Context, r approval.Request) approval.Decision
	PostToolUse(ctx context.Context, r approval.Request, res approval.PostResult) []string
}

// Executor runs an approved tool call (package execution).
type Executor interface {
	Execute(ctx context.Context, r execution.Request) execution.Result
}

// Servers sends the requests other than tool calls (the connection
// manager).
type Servers interface {
	ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error)
	GetPrompt(ctx context.Context, server, name string, args map[string]string) (*mcp.GetPromptResult, error)
	Complete(ctx context.Context, server string, params *mcp.CompleteParams) (*mcp.CompleteResult, error)
	Subscribe(ctx context.Context, server, uri string) error
	Unsubscribe(ctx context.Context, server, uri string) error
}

// Options configures a Pipeline. Approver, Executor and Servers are
// required for the kinds that use them; without an Approver, resource
// reads and prompt gets have no hooks to ask.
type Options struct {
	Approver Approver
	Executor Executor
	Servers  Servers
	// Admit, when set, may refuse a request before it begins to be
	// decided (serve's rate limits); its error text is the refusal and
	// the audit log's rationale, so it says when to retry. name is the
	// model name of a tool, or the name or URI the client used.
	Admit func(caller *identity.Caller, name string) error
	// Running, when set, records the tool calls with an Upstream while
	// they execute, so that what their server sends back finds them
	// (see [Running.For]); the host shares one across reloads.
	Running *Running
	Events  events.Sink // nil = none
	Now     func() time.Time
}

// Pipeline runs requests through their stages.
type Pipeline struct{ opts Options }

// New returns a pipeline.
func New(opts Options) *Pipeline {
	if opts.Events == nil {
		opts.Events = events.SinkFunc(func(events.Event) {})
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Pipeline{opts: opts}
}

// Request is one request to a server (or to the host's own tools).
type Request struct {
	Kind Kind
	// ID is the call id; "" means one is generated.
	ID        string
	SessionID string
	// Server is the server's config name; "" only for built-ins.
	Server string
	// Name is the raw name on the wire: the tool, the prompt, or the
	// completion's prompt ref; "" for resource kinds.
	Name string
	// URI is the raw resource URI (reads, subscriptions, the resource
	// ref of a completion).
	URI string
	// ModelName is the name the client used: a tool's flat model name, a
	// gateway's prefixed prompt name or rewritten URI.
	ModelName string
	// Arguments is the JSON object of a tool call (nil = none), recorded
	// in tool_call_begin for every kind that has arguments.
	Arguments json.RawMessage
	// Caller is who asked; nil means identity.From(ctx).
	Caller *identity.Caller
	// Client is the upstream client; nil means identity.ClientFrom(ctx).
	Client *identity.Client
	// TraceParent is the W3C traceparent; "" means events.TraceParent(ctx).
	TraceParent string
	// Started is when the request entered the host; zero means now.
	Started time.Time

	// Tool is the tool's definition (tool calls): annotations, schema.
	Tool *mcp.Tool
	// Capabilities are the server's, for the sandbox-state meta.
	Capabilities *mcp.ServerCapabilities
	// Upstream is the other end of the request's session: it answers the
	// approval question and takes what the server sends back during a
	// tool call (elicitation, sampling, log messages, progress). nil
	// means nobody: a call that needs a human is denied, and the server's
	// input requests are declined.
	Upstream Upstream
	// Hold is the freshness stage: it waits for the request's turn and
	// checks that its target did not change since it was routed. release
	// runs after the post-hooks. nil = nothing to check.
	Hold func() (release func(), err error)

	// PromptArguments are a prompt get's arguments.
	PromptArguments map[string]string
	// Complete is a completion's parameters, with the ref's raw name/URI.
	Complete *mcp.CompleteParams
	// Run produces a built-in tool's result.
	Run func(ctx context.Context) (*mcp.CallToolResult, error)

	// Check is the admit stage of a forwarded request (Sampling,
	// Elicitation): the door's check that it may be forwarded at all; its
	// error is the refusal's text.
	Check func() error
	// Forward sends a forwarded request upstream; summary (a JSON object,
	// nil = none) is the result its end record keeps.
	Forward func(ctx context.Context) (summary json.RawMessage, err error)
}

// Result is the outcome of a request, whoever ended it.
type Result struct {
	ID string
	// Status is events.CallCompleted, CallFailed or CallDenied.
	Status string
	// Decision is the verdict of the stage that decided; the zero value
	// when the request was not decided (kinds without the decide stage,
	// or refused before it).
	Decision approval.Decision
	// Reached is true when the request was sent to the server.
	Reached bool
	// Err is why the request did not complete: the refusal's text, a
	// transport failure (wrapping the server's error), or a built-in's
	// failure. nil when the server answered (for tools: even isError).
	Err error
	// Raw is the tool result (tool calls, built-ins).
	Raw *mcp.CallToolResult
	// Exec is the executed tool call; nil when it did not run.
	Exec *execution.Result
	// Notes are the PostToolUse hooks' notes for the model.
	Notes []string
	// Resource, Prompt and Completion are the answers of those kinds.
	Resource   *mcp.ReadResourceResult
	Prompt     *mcp.GetPromptResult
	Completion *mcp.CompleteResult
	// Wall is the time from Started to the end.
	Wall time.Duration
}

// Refused reports whether the host refused the request (a denial).
func (r Result) Refused() bool { return r.Status == events.CallDenied }

// Do runs r through the stages of its kind. It never returns an error:
// every outcome is a Result.
func (p *Pipeline) Do(ctx context.Context, r Request) Result {
	stages := r.Kind.Stages()
	if stages == 0 {
		return Result{ID: r.ID, Status: events.CallFailed, Err: fmt.Errorf("unknown request kind %q", r.Kind)}
	}
	if r.Started.IsZero() {
		r.Started = p.opts.Now()
	}
	if r.ID == "" {
		r.ID = NewID("call")
	}
	if r.Caller == nil {
		r.Caller = identity.From(ctx)
	}
	if r.Client == nil {
		r.Client = identity.ClientFrom(ctx)
	}
	if r.TraceParent == "" {
		r.TraceParent = events.TraceParent(ctx)
	}
	f := &flight{p: p, r: r, stages: stages}
	f.call = events.Call{CallID: r.ID, SessionID: r.SessionID, Server: r.Server, Tool: r.Name, URI: r.URI,
		ModelName: r.ModelName, Caller: r.Caller, Client: r.Client, Kind: string(r.Kind), TraceID: traceID(r.TraceParent)}
	return f.run(ctx)
}

// traceID is the trace id of a W3C traceparent (00-<trace id>-<span>-<flags>).
func traceID(tp string) string {
	if len(tp) < 35 {
		return ""
	}
	return tp[3:35]
}

// flight is one request on its way through the stages.
type flight struct {
	p      *Pipeline
	r      Request
	stages Stage
	call   events.Call
	began  bool
	// verdict and step are what decided, for tool_call_end.
	verdict string
	step    approval.DecisionStep
}

func (f *flight) decided(verdict string, step approval.DecisionStep) {
	f.verdict, f.step = verdict, step
}

func (f *flight) run(ctx context.Context) Result {
	p, r := f.p, f.r
	args := r.Arguments
	if f.stages.Has(Begin) {
		rec := args
		if rec == nil && (r.Kind == ToolCall || r.Kind == Builtin) {
			rec = json.RawMessage(`{}`)
		}
		begin := events.ToolCallBegin{At: r.Started, Call: f.call, Arguments: rec, TraceParent: r.TraceParent}
		if r.Tool != nil {
			begin.Annotations = r.Tool.Annotations // replay decides by them (package replay)
		}
		p.opts.Events.Emit(begin)
		f.began = true
	}
	if f.stages.Has(Admit) && (r.Kind == Sampling || r.Kind == Elicitation) {
		if r.Check != nil {
			if err := r.Check(); err != nil {
				f.decided(events.VerdictDenied, approval.StepAdmit)
				res := f.refused(events.CallDenied, err)
				res.Decision = approval.Decision{Step: approval.StepAdmit, By: "host", Text: err.Error()}
				return res
			}
		}
	} else if f.stages.Has(Admit) && p.opts.Admit != nil {
		name := r.ModelName
		if name == "" {
			name = r.Name
		}
		if err := p.opts.Admit(r.Caller, name); err != nil {
			f.decided(events.VerdictDenied, approval.StepRateLimit)
			p.opts.Events.Emit(events.ApprovalDecision{At: p.opts.Now(), Call: f.call, Step: string(approval.StepRateLimit), By: "host",
				Verdict: events.VerdictDenied, Rationale: err.Error()})
			res := f.refused(events.CallDenied, err)
			res.Decision = approval.Decision{Step: approval.StepRateLimit, By: "host", Text: err.Error()}
			return res
		}
	}

	var areq approval.Request
	var dec approval.Decision
	if f.stages.Has(PreHooks) || f.stages.Has(Decide) {
		rawArgs := args
		if rawArgs == nil {
			rawArgs = json.RawMessage(`{}`)
		}
		areq = approval.Request{
			CallID: r.ID, SessionID: r.SessionID,
			Server: r.Server, Tool: r.Name, ModelName: r.ModelName,
			Arguments: rawArgs,
			Caller:    r.Caller,
			Event:     f.call,
			Asker:     asker(r.Upstream),
			URI:       r.URI, PromptArguments: r.PromptArguments,
		}
		if t := r.Tool; t != nil {
			areq.Annotations, areq.Title, areq.Description, areq.InputSchema = t.Annotations, t.Title, t.Description, t.InputSchema
		}
		if f.stages.Has(PreHooks) {
			var blocked *approval.Decision
			switch {
			case r.Kind != ToolCall && p.opts.Approver == nil:
				// No approver, so no hooks to ask.
			case r.Kind == ResourceRead || r.Kind == ResourceSubscribe || (r.Kind == Completion && r.URI != ""):
				blocked = p.opts.Approver.PreResourceRead(ctx, areq)
			case r.Kind == PromptGet || r.Kind == Completion:
				if r.Kind == Completion && r.Complete != nil {
					areq.PromptArguments = map[string]string{r.Complete.Argument.Name: r.Complete.Argument.Value}
				}
				blocked = p.opts.Approver.PrePromptGet(ctx, areq)
			default:
				areq, blocked = p.opts.Approver.PreToolUse(ctx, areq, areq.InputSchema)
			}
			if blocked != nil {
				f.decided(events.VerdictDenied, blocked.Step)
				res := f.refused(events.CallDenied, errors.New(blocked.Text))
				res.Decision = *blocked
				return res
			}
			if string(areq.Arguments) != string(rawArgs) {
				// A hook rewrote the arguments (validated against the schema).
				var err error
				if args, err = execution.ParseArguments(areq.Arguments); err != nil {
					return f.refused(events.CallFailed, err)
				}
			}
		}
		if f.stages.Has(Decide) {
			dec = p.opts.Approver.Decide(ctx, areq)
			if !dec.Approved {
				f.decided(events.VerdictDenied, dec.Step)
				res := f.refused(events.CallDenied, errors.New(dec.Text))
				res.Decision = dec
				return res
			}
			f.decided(events.VerdictApproved, dec.Step)
		}
	}
	if !f.stages.Has(Decide) {
		if r.Kind == Builtin {
			f.decided(events.VerdictApproved, approval.StepHost)
		} else {
			f.decided(events.VerdictApproved, approval.StepAdmit)
		}
	}

	if f.stages.Has(Freshness) && r.Hold != nil {
		// Only running is held, not approval: a prompt waiting on a
		// human must not stall parallel-safe calls.
		release, err := r.Hold()
		if release != nil {
			defer release()
		}
		if err != nil {
			res := f.refused(events.CallFailed, err)
			res.Decision = dec
			return res
		}
	}

	res := f.execute(ctx, args)
	res.Decision = dec
	if f.stages.Has(PostHooks) && res.Exec != nil {
		ex := res.Exec
		res.Notes = p.opts.Approver.PostToolUse(ctx, areq, approval.PostResult{Status: ex.Status,
			Output:  func() string { return ex.Output().Text },
			IsError: ex.Raw == nil || ex.Raw.IsError, Raw: ex.Raw, Err: ex.Err, Duration: ex.Wall})
	}
	return res
}

// execute is the execute stage, then end.
func (f *flight) execute(ctx context.Context, args json.RawMessage) Result {
	p, r := f.p, f.r
	out := Result{ID: r.ID, Status: events.CallCompleted, Reached: r.Kind != Builtin}
	var err error
	var summary json.RawMessage
	switch r.Kind {
	case ToolCall:
		var progress func(*mcp.ProgressNotificationParams)
		if r.Upstream != nil {
			progress = r.Upstream.Progress()
			if rn := p.opts.Running; rn != nil {
				var seq uint64
				ctx, seq = rn.begin(ctx, &f.r)
				defer rn.end(r.Server, seq)
			}
		}
		ex := p.opts.Executor.Execute(ctx, execution.Request{
			Call: f.call, Arguments: args, Capabilities: r.Capabilities,
			OnProgress: progress, Started: r.Started,
		})
		out.Exec, out.Raw, out.Status, out.Err, out.Wall = &ex, ex.Raw, ex.Status, ex.Err, ex.Wall
		if f.began {
			p.opts.Events.Emit(events.ToolCallEnd{At: ex.Finished, Call: f.call, Status: ex.Status, Duration: ex.Wall,
				Result: ex.EventResult, Error: ex.EventError, Decision: f.verdict, DecisionStep: string(f.step)})
		}
		return out
	case Builtin:
		out.Raw, err = r.Run(ctx)
	case ResourceRead:
		out.Resource, err = p.opts.Servers.ReadResource(ctx, r.Server, r.URI)
	case ResourceSubscribe:
		err = p.opts.Servers.Subscribe(ctx, r.Server, r.URI)
	case ResourceUnsubscribe:
		err = p.opts.Servers.Unsubscribe(ctx, r.Server, r.URI)
	case PromptGet:
		out.Prompt, err = p.opts.Servers.GetPrompt(ctx, r.Server, r.Name, r.PromptArguments)
	case Completion:
		out.Completion, err = p.opts.Servers.Complete(ctx, r.Server, r.Complete)
	case Sampling, Elicitation:
		if r.Forward == nil {
			err = fmt.Errorf("a %s request with nothing to forward", r.Kind)
			break
		}
		summary, err = r.Forward(ctx)
	}
	if err != nil {
		out.Err, out.Status = err, events.CallFailed
	}
	out.Wall = p.opts.Now().Sub(r.Started)
	if f.began {
		ev := events.ToolCallEnd{At: p.opts.Now(), Call: f.call, Status: out.Status, Duration: out.Wall,
			Decision: f.verdict, DecisionStep: string(f.step)}
		if err != nil {
			ev.Error = execution.Truncate(err.Error(), execution.EventResultMaxBytes)
		}
		if out.Raw != nil {
			ev.Result = execution.EventProjection(out.Raw, nil)
		}
		if summary != nil {
			ev.Result = summary
		}
		p.opts.Events.Emit(ev)
	}
	return out
}

// refused ends a request the host refused (or failed) before execution,
// with its tool_call_end when it began.
func (f *flight) refused(status string, err error) Result {
	p, r := f.p, f.r
	wall := p.opts.Now().Sub(r.Started)
	res := Result{ID: r.ID, Status: status, Err: err, Wall: wall}
	if r.Kind == ToolCall || r.Kind == Builtin {
		res.Raw = ErrorResult(err.Error())
	}
	if f.began {
		ev := events.ToolCallEnd{At: p.opts.Now(), Call: f.call, Status: status, Duration: wall, Error: err.Error(),
			Decision: f.verdict, DecisionStep: string(f.step)}
		if res.Raw != nil {
			ev.Result = execution.EventProjection(res.Raw, nil)
		}
		p.opts.Events.Emit(ev)
	}
	return res
}

// asker is the approval half of up; nil (not a nil Upstream in an
// interface) when there is none.
func asker(up Upstream) approval.Asker {
	if up == nil {
		return nil
	}
	return up
}

// ErrorResult is the isError tool result carrying text, for tool calls
// the host ended.
func ErrorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// NewID returns a random id with a readable prefix, e.g. "call_9f1c…".
func NewID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + "_" + hex.EncodeToString(b[:])
}
