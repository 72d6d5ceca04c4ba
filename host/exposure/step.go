package exposure

import (
	"context"
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
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/execution"
	"github.com/toolgate/toolgate/host/exposure/embeddings"
	"github.com/toolgate/toolgate/host/manager"
	"github.com/toolgate/toolgate/host/pipeline"
)

// Snapshots is what a step needs from discovery: the current snapshot of
// what the ready servers list.
type Snapshots interface {
	Snapshot() *manager.Snapshot
}

// Options configures a Step.
type Options struct {
	Snapshots Snapshots
	// Pipeline runs every routed call (admit, audit, hooks, approval,
	// execution); nil = one that can run only the host's own tools.
	Pipeline *pipeline.Pipeline
	// SessionID identifies the approval session (session memory, audit).
	SessionID string
	// Model shapes the texts of calls that never reach a server.
	Model  execution.Model
	Events events.Sink // nil = none
	Logger hclog.Logger
	Now    func() time.Time // nil = time.Now
	// Policy decides direct and deferred tools; the zero value exposes
	// every visible tool directly.
	Policy Policy
	// Indexes shares tool_search indexes between steps; nil means this
	// step builds its own.
	Indexes *Indexes
	// Embeddings adds tool_search's semantic ranking; nil = BM25 alone.
	Embeddings *embeddings.Client
}

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
	cat      *manager.Snapshot
	registry map[string]*Tool // model name → every runtime
	visible  []*Tool          // the model's initial list: direct tools, then tool_search
	deferred []*Tool          // found only through tool_search
	search   *Tool            // the tool_search entry; nil when nothing is deferred

	mu    sync.Mutex
	found map[string]bool // deferred tools returned by tool_search in this step

	// serial lets parallel-safe calls share (RLock) while every other
	// call runs alone (Lock).
	serial sync.RWMutex
	// unlock and runlock are serial's release functions, made once: the
	// freshness stage hands one to the pipeline on every call.
	unlock, runlock func()
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
	if opts.Pipeline == nil {
		opts.Pipeline = pipeline.New(pipeline.Options{Events: opts.Events, Now: opts.Now})
	}
	s := &Step{opts: opts, log: opts.Logger.Named("step"), found: map[string]bool{}}
	s.unlock, s.runlock = s.serial.Unlock, s.serial.RUnlock
	return s
}

// SessionID is the step's approval session.
func (s *Step) SessionID() string { return s.opts.SessionID }

// capture takes the catalog once; every consumer of the step reads it.
func (s *Step) capture() {
	s.once.Do(func() {
		s.cat = s.opts.Snapshots.Snapshot()
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
	// Upstream is the session the call came from (pipeline.Upstream):
	// it answers the approval question and takes the server's progress,
	// log messages and input requests during the call. nil = nobody.
	Upstream pipeline.Upstream
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
	model execution.Model
	notes []string
	// resource is read_mcp_resource's answer, before it is shaped as a
	// tool result.
	resource *mcp.ReadResourceResult
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

// Call routes one model-proposed call and runs it through the pipeline
// (admit, audit, hooks, approval, execution). It never returns an
// error: every outcome, including denials, is a result the model can
// read.
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
	return s.do(ctx, t, pipeline.Request{
		Kind: pipeline.ToolCall, ID: req.CallID, SessionID: s.opts.SessionID,
		Server: t.Server, Name: t.RawName(), ModelName: t.ModelName, Arguments: args,
		Started: started, Tool: t.Tool, Capabilities: t.ServerInfo.Capabilities, Upstream: req.Upstream,
		Hold: func() (func(), error) { return s.hold(t) },
	})
}

// do hands a routed request to the pipeline and reads its result back
// as the model's.
func (s *Step) do(ctx context.Context, t *Tool, r pipeline.Request) CallResult {
	res := s.opts.Pipeline.Do(ctx, r)
	out := CallResult{CallID: res.ID, Status: res.Status, Raw: res.Raw, Decision: res.Decision, Reached: res.Reached,
		Tool: t, Err: res.Err, exec: res.Exec, notes: res.Notes, wall: res.Wall, model: s.opts.Model,
		resource: res.Resource}
	if out.Raw == nil {
		text := "the server returned no result"
		if res.Err != nil {
			text = res.Err.Error()
		}
		out.Raw = errorResult(text)
	}
	return out
}

// hold is the pipeline's freshness stage for a tool of this step: it
// takes the call's turn (parallel-safe calls share it, every other call
// runs alone) and then checks the tool against the live catalog, since
// approval may have waited on a human for minutes.
func (s *Step) hold(t *Tool) (func(), error) {
	if t.Parallel {
		s.serial.RLock()
		return s.runlock, s.stillCurrent(t)
	}
	s.serial.Lock()
	return s.unlock, s.stillCurrent(t)
}

// stillCurrent checks the tool against the live catalog. Only a revision
// change costs anything.
func (s *Step) stillCurrent(t *Tool) error {
	cur := s.opts.Snapshots.Snapshot()
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

func errorResult(text string) *mcp.CallToolResult { return pipeline.ErrorResult(text) }

// NewID returns a random id with a readable prefix, e.g. "call_9f1c…".
func NewID(prefix string) string { return pipeline.NewID(prefix) }
