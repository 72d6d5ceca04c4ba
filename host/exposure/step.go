package exposure

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/catalog"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/execution"
	"github.com/toolgate/toolgate/host/exposure/embeddings"
	"github.com/toolgate/toolgate/host/identity"
	"github.com/toolgate/toolgate/host/manager"
)

// Catalogs is what a step needs from discovery: the current catalog.
type Catalogs interface {
	Catalog() *manager.Catalog
}

// Approver decides whether one call may run (package approval): the
// PreToolUse hooks first (they may block or rewrite), then the ordered
// procedure; PostToolUse hooks see the result.
type Approver interface {
	PreToolUse(ctx context.Context, r approval.Request, inputSchema any) (approval.Request, *approval.Decision)
	Decide(ctx context.Context, r approval.Request) approval.Decision
	PostToolUse(ctx context.Context, r approval.Request, res approval.PostResult) []string
}

// Executor runs an approved call (package execution).
type Executor interface {
	Execute(ctx context.Context, r execution.Request) execution.Result
}

// Options configures a Step.
type Options struct {
	Catalogs Catalogs
	Approver Approver
	Executor Executor
	// SessionID identifies the approval session (session memory, audit).
	SessionID string
	// Model shapes the texts of calls that never reach a server.
	Model  config.Model
	Events events.Sink // nil = none
	Logger hclog.Logger
	Now    func() time.Time // nil = time.Now
	// Policy decides direct and deferred tools; the zero value exposes
	// every visible tool directly.
	Policy Policy
	// Indexes shares tool_search indexes between steps; nil means this
	// step builds its own.
	Indexes *Indexes
	// Admit, when set, may refuse a call before approval (serve's rate
	// limits); its error text is the model's result and the audit log's
	// rationale, so it says when to retry.
	Admit func(call events.Call) error
	// Embeddings adds tool_search's semantic ranking; nil = BM25 alone.
	Embeddings *embeddings.Client
}

// StepRateLimit is the approval_decision step of a call a limit refused.
const StepRateLimit = "rate_limit"

// Visibility of a tool in a step.
const (
	Direct  = "direct"  // in the model's tool list
	Hidden  = "hidden"  // dispatchable for apps, never shown to or run by the model
	Builtin = "builtin" // the host's own tool (tool_search)
)

// Tool is one entry of a step's registry.
type Tool struct {
	catalog.ToolInfo
	// Exposure is Direct, Deferred, Hidden or Builtin.
	Exposure string
	// Parallel is true when calls may run concurrently with others: the
	// server opted in or the tool is read-only.
	Parallel bool
	// Server describes the owning server at capture time.
	ServerInfo manager.ServerInfo
}

// Step is one model turn's view of the tools. Build one with NewStep per
// turn (CLI: per invocation; gateway: per upstream listing).
type Step struct {
	opts Options
	log  hclog.Logger

	once     sync.Once
	cat      *manager.Catalog
	registry map[string]*Tool // model name → every runtime
	visible  []*Tool          // the model's initial list: direct tools, then tool_search
	deferred []*Tool          // found only through tool_search
	search   *Tool            // the tool_search entry; nil when nothing is deferred

	mu    sync.Mutex
	found map[string]bool // deferred tools returned by tool_search in this step

	// serial lets parallel-safe calls share (RLock) while every other
	// call runs alone (Lock).
	serial sync.RWMutex
}

// NewStep returns a step; nothing is captured until first use.
func NewStep(opts Options) *Step {
	if opts.Events == nil {
		opts.Events = events.SinkFunc(func(events.Event) {})
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.SessionID == "" {
		opts.SessionID = NewID("session")
	}
	if opts.Indexes == nil {
		opts.Indexes = &Indexes{}
	}
	return &Step{opts: opts, log: opts.Logger.Named("step"), found: map[string]bool{}}
}

// SessionID is the step's approval session.
func (s *Step) SessionID() string { return s.opts.SessionID }

// capture takes the catalog once; every consumer of the step reads it.
func (s *Step) capture() {
	s.once.Do(func() {
		s.cat = s.opts.Catalogs.Catalog()
		s.registry = make(map[string]*Tool, len(s.cat.Tools))
		all := make([]*Tool, 0, len(s.cat.Tools))
		for _, ti := range s.cat.Tools {
			info := s.cat.Servers[ti.Server]
			t := &Tool{
				ToolInfo:   ti,
				Exposure:   Direct,
				ServerInfo: info,
				Parallel:   info.ParallelToolCalls || (ti.Tool.Annotations != nil && ti.Tool.Annotations.ReadOnlyHint),
			}
			if !ti.ModelVisible {
				t.Exposure = Hidden
			}
			s.registry[ti.ModelName] = t
			all = append(all, t)
		}
		s.opts.Policy.plan(all)
		var servers []string
		seen := map[string]bool{}
		for _, t := range all {
			switch t.Exposure {
			case Direct:
				s.visible = append(s.visible, t)
			case Deferred:
				s.deferred = append(s.deferred, t)
				if !seen[t.Server] {
					seen[t.Server] = true
					servers = append(servers, t.Server)
				}
			}
		}
		if len(s.deferred) > 0 {
			s.search = newSearchEntry(servers, s.instructions())
			if _, taken := s.registry[SearchToolName]; taken {
				s.log.Warn("a server tool is named tool_search; the host's tool_search takes precedence")
			}
			s.registry[SearchToolName] = s.search
			s.visible = append(s.visible, s.search)
		}
		for _, t := range resourceTools(s.cat.Resources, s.cat.Templates) {
			if _, taken := s.registry[t.ModelName]; taken {
				s.log.Warn("a server tool has the name of a host resource tool; the host's takes precedence", "tool", t.ModelName)
			}
			s.registry[t.ModelName] = t
			s.visible = append(s.visible, t)
		}
	})
}

// All returns every runtime of the step — direct, deferred, hidden and
// builtin — sorted by model name.
func (s *Step) All() []*Tool {
	s.capture()
	out := make([]*Tool, 0, len(s.registry))
	for _, t := range s.registry {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ModelName < out[j].ModelName })
	return out
}

// Deferred returns the step's deferred tools.
func (s *Step) Deferred() []*Tool {
	s.capture()
	return s.deferred
}

// Revision is the catalog revision the step captured.
func (s *Step) Revision() uint64 {
	s.capture()
	return s.cat.Revision
}

// Tools returns the model-visible tools of the step.
func (s *Step) Tools() []*Tool {
	s.capture()
	return s.visible
}

// Lookup returns any registered runtime by model name, visible or not.
func (s *Step) Lookup(name string) (*Tool, bool) {
	s.capture()
	t, ok := s.registry[name]
	return t, ok
}

// CallRequest is one function call proposed by the model.
type CallRequest struct {
	// CallID is the model's call id; "" means one is generated.
	CallID string
	// Name is the flat model-visible tool name.
	Name string
	// Arguments is the model's JSON argument text ("" = no arguments).
	Arguments []byte
	// OnProgress receives the server's progress notifications.
	OnProgress func(*mcp.ProgressNotificationParams)
}

// CallResult is the outcome of one call, whoever ended it.
type CallResult struct {
	CallID string
	// Status is events.CallCompleted, CallFailed or CallDenied.
	Status string
	// Raw is the server's CallToolResult, or for calls the host ended
	// (unknown tool, bad arguments, denial, stale catalog, transport
	// failure) an isError result carrying the same text.
	Raw *mcp.CallToolResult
	// Decision is the approval verdict; the zero value when the call
	// ended before approval.
	Decision approval.Decision
	// Reached is true when the call was sent to the server.
	Reached bool
	// Tool is the runtime called; nil for an unknown name.
	Tool *Tool
	// Found lists the tools a tool_search call returned, now callable.
	Found []*Tool
	// Err is why the host ended the call, nil when the server answered.
	Err error

	// What Output projects: the executed call (nil when the host ended
	// it: then Raw carries the text), its wall time and the notes of
	// PostToolUse hooks.
	exec  *execution.Result
	wall  time.Duration
	model config.Model
	notes []string
}

// Output is what the model receives ([execution.ModelProjection] plus the
// notes of PostToolUse hooks). It is computed on demand: a gateway
// forwards Raw to its client and never needs it.
func (r CallResult) Output() execution.ModelOutput {
	var out execution.ModelOutput
	if r.exec != nil {
		out = r.exec.Output()
	} else {
		out = execution.ModelProjection(r.Raw, nil, r.wall, r.model)
	}
	if len(r.notes) > 0 {
		note := strings.Join(r.notes, "\n")
		out.Text += "\n\n" + note
		if len(out.Items) > 0 {
			out.Items = append(out.Items, execution.Item{Type: execution.ItemText, Text: note})
		}
	}
	return out
}

// Texts the model receives when the host ends a call.
const (
	textUnsupported = "unsupported call: %s"
	textNotForModel = "MCP tool `%s/%s` is not available to the model"
	textStale       = "tool call rejected because the catalog changed after \"%s/%s\" was prepared"
)

// Call runs one model-proposed call through exposure, approval and
// execution. It never returns an error: every outcome, including
// denials, is a result the model can read.
func (s *Step) Call(ctx context.Context, req CallRequest) CallResult {
	started := s.opts.Now()
	s.capture()
	if req.CallID == "" {
		req.CallID = NewID("call")
	}
	t, ok := s.registry[req.Name]
	if !ok {
		return s.ended(req.CallID, nil, started, fmt.Errorf(textUnsupported, req.Name))
	}
	switch t.Exposure {
	case Hidden:
		return s.ended(req.CallID, t, started, fmt.Errorf(textNotForModel, t.Server, t.RawName()))
	case Builtin:
		if IsResourceTool(t.ModelName) {
			return s.callResourceTool(ctx, req, t, started)
		}
		return s.callSearch(ctx, req, started)
	}
	args, err := execution.ParseArguments(req.Arguments)
	if err != nil {
		return s.ended(req.CallID, t, started, err)
	}

	call := events.Call{CallID: req.CallID, SessionID: s.opts.SessionID, Server: t.Server, Tool: t.RawName(), ModelName: t.ModelName,
		Caller: identity.From(ctx)}
	rawArgs := args
	if rawArgs == nil {
		rawArgs = json.RawMessage(`{}`)
	}
	s.opts.Events.Emit(events.ToolCallBegin{At: started, Call: call, Arguments: rawArgs, Annotations: t.Tool.Annotations,
		TraceParent: events.TraceParent(ctx)})
	if s.opts.Admit != nil {
		if err := s.opts.Admit(call); err != nil {
			s.opts.Events.Emit(events.ApprovalDecision{At: s.opts.Now(), Call: call, Step: StepRateLimit, By: "host",
				Verdict: events.VerdictDenied, Rationale: err.Error()})
			r := s.endedAfterBegin(call, t, started, events.CallDenied, err)
			r.Decision = approval.Decision{Step: StepRateLimit, By: "host", Text: err.Error()}
			return r
		}
	}

	areq, args, dec, refused := s.approve(ctx, call, t, started, args, rawArgs)
	if refused != nil {
		return *refused
	}
	return s.run(ctx, req, call, t, started, areq, args, dec)
}

// approve runs the approval chain for a call that has begun: the
// PreToolUse hooks (which may block, or rewrite the arguments within the
// tool's schema), then the decision. It returns the request as approved
// with the arguments to send, or the result that ends a refused call.
func (s *Step) approve(ctx context.Context, call events.Call, t *Tool, started time.Time, args, rawArgs json.RawMessage) (approval.Request, json.RawMessage, approval.Decision, *CallResult) {
	areq := approval.Request{
		CallID: call.CallID, SessionID: s.opts.SessionID,
		Server: t.Server, Tool: t.RawName(), ModelName: t.ModelName,
		Arguments:   rawArgs,
		Annotations: t.Tool.Annotations,
		Title:       t.Tool.Title, Description: t.Tool.Description,
		InputSchema: t.Tool.InputSchema,
		Caller:      call.Caller,
	}
	areq, blocked := s.opts.Approver.PreToolUse(ctx, areq, t.Tool.InputSchema)
	if blocked != nil {
		r := s.endedAfterBegin(call, t, started, events.CallDenied, fmt.Errorf("%s", blocked.Text))
		r.Decision = *blocked
		return areq, nil, *blocked, &r
	}
	if string(areq.Arguments) != string(rawArgs) {
		// A hook rewrote the arguments (validated against the schema).
		var err error
		if args, err = execution.ParseArguments(areq.Arguments); err != nil {
			r := s.endedAfterBegin(call, t, started, events.CallFailed, err)
			return areq, nil, approval.Decision{}, &r
		}
	}
	dec := s.opts.Approver.Decide(ctx, areq)
	if !dec.Approved {
		r := s.endedAfterBegin(call, t, started, events.CallDenied, fmt.Errorf("%s", dec.Text))
		r.Decision = dec
		return areq, nil, dec, &r
	}
	return areq, args, dec, nil
}

// run executes an approved call on its server and runs the PostToolUse
// hooks, serialized with the step's other calls unless the tool is
// parallel-safe.
func (s *Step) run(ctx context.Context, req CallRequest, call events.Call, t *Tool, started time.Time,
	areq approval.Request, args json.RawMessage, dec approval.Decision) CallResult {
	// Only running is serialized, not approval: a prompt waiting on a
	// human must not stall parallel-safe calls.
	if t.Parallel {
		s.serial.RLock()
		defer s.serial.RUnlock()
	} else {
		s.serial.Lock()
		defer s.serial.Unlock()
	}
	// Approval may have waited on a human for minutes: refuse to route to a
	// tool that changed meanwhile.
	if err := s.stillCurrent(t); err != nil {
		r := s.endedAfterBegin(call, t, started, events.CallFailed, err)
		r.Decision = dec
		return r
	}

	res := s.opts.Executor.Execute(ctx, execution.Request{
		Call:         call,
		Arguments:    args,
		Capabilities: t.ServerInfo.Capabilities,
		OnProgress:   req.OnProgress,
		Started:      started,
	})
	notes := s.opts.Approver.PostToolUse(ctx, areq, approval.PostResult{Status: res.Status,
		Output:  func() string { return res.Output().Text },
		IsError: res.Raw == nil || res.Raw.IsError, Raw: res.Raw, Err: res.Err, Duration: res.Wall})
	out := CallResult{CallID: req.CallID, Status: res.Status, Raw: res.Raw,
		Decision: dec, Reached: true, Tool: t, Err: res.Err, exec: &res, notes: notes}
	if out.Raw == nil {
		text := "the server returned no result"
		if res.Err != nil {
			text = res.Err.Error()
		}
		out.Raw = errorResult(text)
	}
	return out
}

// stillCurrent checks the tool against the live catalog. Only a revision
// change costs anything.
func (s *Step) stillCurrent(t *Tool) error {
	cur := s.opts.Catalogs.Catalog()
	if cur.Revision == s.cat.Revision {
		return nil
	}
	for _, ti := range cur.Tools {
		if ti.Server == t.Server && ti.RawName() == t.RawName() {
			if ti.ModelName == t.ModelName && reflect.DeepEqual(ti.Tool, t.Tool) {
				return nil
			}
			break
		}
	}
	return fmt.Errorf(textStale, t.Server, t.RawName())
}

// ended finishes a call that never began (no events: nothing was asked
// of anyone).
func (s *Step) ended(callID string, t *Tool, started time.Time, err error) CallResult {
	return CallResult{
		CallID: callID, Status: events.CallFailed, Tool: t, Err: err,
		Raw:  errorResult(err.Error()),
		wall: s.opts.Now().Sub(started), model: s.opts.Model,
	}
}

// endedAfterBegin finishes a call the host refused after tool_call_begin,
// with its tool_call_end.
func (s *Step) endedAfterBegin(call events.Call, t *Tool, started time.Time, status string, err error) CallResult {
	r := s.ended(call.CallID, t, started, err)
	r.Status = status
	s.opts.Events.Emit(events.ToolCallEnd{
		At: s.opts.Now(), Call: call, Status: status, Duration: s.opts.Now().Sub(started),
		Result: execution.EventProjection(r.Raw, nil), Error: err.Error(),
	})
	return r
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// NewID returns a random id with a readable prefix, e.g. "call_9f1c…".
func NewID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + "_" + hex.EncodeToString(b[:])
}
