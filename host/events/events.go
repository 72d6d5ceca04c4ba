package events

import (
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/identity"
)

// Event is one typed thing that happened in the host. Every event has a
// stable Kind used as the "event" field in the audit log.
type Event interface {
	Kind() string
}

// Sink receives events. Emit must not block for long: a sink that needs to
// do slow work queues it.
type Sink interface {
	Emit(Event)
}

// SinkFunc adapts a function to a Sink.
type SinkFunc func(Event)

// Emit calls f(e).
func (f SinkFunc) Emit(e Event) { f(e) }

// Server startup states.
const (
	StatusStarting  = "starting"
	StatusReady     = "ready"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

// ServerStartup reports a server's startup progress: starting, then
// exactly one of ready, failed or cancelled.
type ServerStartup struct {
	At     time.Time `json:"at"`
	Server string    `json:"server"`
	Status string    `json:"status"`
	Error  string    `json:"error,omitempty"`
	// Tools is the number of tools listed (ready only).
	Tools int `json:"tools,omitempty"`
	// Protocol is the negotiated protocol version (ready only).
	Protocol string `json:"protocol,omitempty"`
}

func (ServerStartup) Kind() string { return "server_startup" }

// ServerError pairs a server with its failure text.
type ServerError struct {
	Server string `json:"server"`
	Error  string `json:"error"`
}

// StartupComplete is emitted once after every server finished starting.
type StartupComplete struct {
	At        time.Time     `json:"at"`
	Ready     []string      `json:"ready"`
	Failed    []ServerError `json:"failed"`
	Cancelled []string      `json:"cancelled"`
}

func (StartupComplete) Kind() string { return "startup_complete" }

// ServerState reports a change of a server's state after startup: it
// crashed, restarted, or its tool list changed.
type ServerState struct {
	At       time.Time `json:"at"`
	Server   string    `json:"server"`
	Status   string    `json:"status"` // ready | failed | closed
	Error    string    `json:"error,omitempty"`
	Restarts int       `json:"restarts,omitempty"`
	Revision uint64    `json:"revision,omitempty"`
}

func (ServerState) Kind() string { return "server_state" }

// Call identifies one request in every call event: a tool call, or
// another kind of request to a server (host/pipeline's kinds).
type Call struct {
	CallID    string `json:"call_id"`
	SessionID string `json:"session_id"`
	// Kind is the request's kind (tool_call, builtin, resource_read,
	// resource_subscribe, prompt_get, completion); "" in events of
	// code that predates kinds means a tool call.
	Kind   string `json:"kind,omitempty"`
	Server string `json:"server"`
	Tool   string `json:"tool"` // raw name: the tool, prompt or completion's prompt ref
	// URI is the raw resource URI of resource kinds.
	URI       string `json:"uri,omitempty"`
	ModelName string `json:"model_name"` // the name the client used
	// Caller is who made the call (toolgate serve with auth); omitted
	// when unknown.
	Caller *identity.Caller `json:"caller,omitempty"`
	// Client is the upstream client as it named itself in initialize
	// (toolgate serve), or the CLI command that sent the request
	// ("toolgate call", "toolgate read") with toolgate's version.
	Client *identity.Client `json:"client,omitempty"`
	// TraceID is the W3C trace id of the request's traceparent; "" when
	// the client sent none.
	TraceID string `json:"trace_id,omitempty"`
}

// Method is the MCP method of the request (tools/call, resources/read,
// ...): what a span is named by, and the tool label of metrics for kinds
// whose name is not a tool's (a URI would make unbounded labels).
func (c Call) Method() string {
	switch c.Kind {
	case "resource_read":
		return "resources/read"
	case "resource_subscribe":
		return "resources/subscribe"
	case "prompt_get":
		return "prompts/get"
	case "completion":
		return "completion/complete"
	}
	return "tools/call"
}

// ToolCallBegin is emitted when a call enters the host, before approval.
type ToolCallBegin struct {
	At time.Time `json:"at"`
	Call
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Annotations are the tool's hints as the approval chain saw them,
	// so `toolgate replay` can decide the call again; nil when the
	// server declared none.
	Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
	// TraceParent is the W3C traceparent the client sent with the call
	// (in _meta or as an HTTP header), so a tracer can join its trace;
	// "" when none. See WithTraceParent.
	TraceParent string `json:"traceparent,omitempty"`
}

func (ToolCallBegin) Kind() string { return "tool_call_begin" }

// Approval verdicts.
const (
	VerdictApproved = "approved"
	VerdictDenied   = "denied"
	VerdictAbstain  = "abstain" // a step had no opinion; the procedure goes on
)

// ApprovalDecision is one step's verdict on a call.
type ApprovalDecision struct {
	At time.Time `json:"at"`
	Call
	Step      string `json:"step"`    // an approval.DecisionStep: mode | annotations | session | hook | guardian | user | pre_tool_use | …
	By        string `json:"by"`      // who decided: "host", hook/plugin name, "guardian", "user"
	Verdict   string `json:"verdict"` // approved | denied | abstain
	Rationale string `json:"rationale,omitempty"`
	RiskLevel string `json:"risk_level,omitempty"`
	// Before and After are set when a PreToolUse hook rewrote arguments.
	Before json.RawMessage `json:"before,omitempty"`
	After  json.RawMessage `json:"after,omitempty"`
	// ApprovedDefinition and Definition are set when a remembered
	// approval no longer applies because the server changed the tool:
	// the definition hash the user approved and the one it has now.
	ApprovedDefinition string `json:"approved_definition,omitempty"`
	Definition         string `json:"definition,omitempty"`
}

func (ApprovalDecision) Kind() string { return "approval_decision" }

// Call end statuses.
const (
	CallCompleted = "completed"
	CallFailed    = "failed"
	CallDenied    = "denied"
)

// ToolCallEnd is emitted once per call that began.
type ToolCallEnd struct {
	At time.Time `json:"at"`
	Call
	Status   string        `json:"status"`
	Duration time.Duration `json:"duration_ns"`
	// Result is the event projection of the result (capped at 1 MiB).
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	// Decision is approved or denied; DecisionStep the step that decided
	// (an approval.DecisionStep: an approval_decision step, "rate_limit",
	// "admit" for kinds that are admitted without approval, "host" for
	// the host's own tools). Both are "" for a request that
	// failed before it was decided (a stale catalog, a bad rewrite).
	Decision     string `json:"decision,omitempty"`
	DecisionStep string `json:"decision_step,omitempty"`
}

func (ToolCallEnd) Kind() string { return "tool_call_end" }

// PluginState reports a plugin process starting, exiting or being given up on.
type PluginState struct {
	At         time.Time `json:"at"`
	Plugin     string    `json:"plugin"`
	PluginKind string    `json:"kind"`
	Status     string    `json:"status"` // started | exited | failed | given_up
	Error      string    `json:"error,omitempty"`
	Pid        int       `json:"pid,omitempty"`
}

func (PluginState) Kind() string { return "plugin_state" }

// Plugin states.
const (
	PluginStarted = "started"
	PluginExited  = "exited"
	PluginFailed  = "failed"
	PluginGivenUp = "given_up"
)

// ConfigApplied is emitted when a new configuration was put in force
// without a restart (SIGHUP or a watched file change). Front ends that
// publish tools (the gateway) refresh on it: exposure settings may have
// changed without any server's tool list changing.
type ConfigApplied struct {
	At        time.Time `json:"at"`
	Kept      []string  `json:"kept"`
	Updated   []string  `json:"updated"`
	Restarted []string  `json:"restarted"`
	Removed   []string  `json:"removed"`
	Added     []string  `json:"added"`
}

func (ConfigApplied) Kind() string { return "config_applied" }

// Draining is emitted once when a front end (toolgate serve) begins to
// drain for shutdown: it refuses new sessions and gives the calls in
// flight Grace to finish.
type Draining struct {
	At       time.Time     `json:"at"`
	InFlight int           `json:"in_flight"`
	Grace    time.Duration `json:"grace_ns,omitempty"`
}

func (Draining) Kind() string { return "draining" }

// Held-approval actions (package inbox).
const (
	HeldPending  = "pending"  // a call waits for an approver
	HeldApproved = "approved" // an approver allowed it
	HeldDenied   = "denied"   // an approver denied it
	HeldRefused  = "refused"  // an answer was refused (not an approver, own call, already answered)
	HeldExpired  = "expired"  // nobody answered in time
	HeldUsed     = "used"     // the approved call ran (approvals are single-use)
)

// HeldApproval records one step in the life of a held approval
// (approval { inbox }): the call it is bound to, the binding hash, and
// for answers who answered. The audit log therefore shows, for every
// call a human approved from a browser, the terminal or a chat message,
// the approver's identity, the approval id and the exact call it covered.
type HeldApproval struct {
	At time.Time `json:"at"`
	Call
	ApprovalID string `json:"approval_id"`
	// Binding is the hash the approval is bound to: server, tool,
	// definition hash, canonical arguments hash and caller.
	Binding string `json:"binding"`
	Action  string `json:"action"` // pending | approved | denied | refused | expired | used
	// Scope is "once" or "session" for approvals.
	Scope string `json:"scope,omitempty"`
	// Approver names who answered; ApproverCaller is their OAuth
	// identity when they authenticated with one.
	Approver       string           `json:"approver,omitempty"`
	ApproverCaller *identity.Caller `json:"approver_caller,omitempty"`
	Reason         string           `json:"reason,omitempty"`
}

func (HeldApproval) Kind() string { return "held_approval" }

// ShadowDecision is what a shadow hook (mode = "shadow") answered for a
// call the enforced chain had decided: recorded beside the real decision,
// never applied. Differs is set when the hook allowed what was denied or
// denied what was allowed.
type ShadowDecision struct {
	At time.Time `json:"at"`
	Call
	Hook string `json:"by"`
	// Decision is allow, deny, none (no opinion) or error (failed, timed
	// out, or cancelled when the host stopped).
	Decision     string        `json:"shadow_decision"`
	Enforced     string        `json:"enforced"` // allow | deny
	EnforcedStep string        `json:"enforced_step"`
	Differs      bool          `json:"differs"`
	Message      string        `json:"message,omitempty"`
	Error        string        `json:"error,omitempty"`
	Duration     time.Duration `json:"duration_ns"`
}

func (ShadowDecision) Kind() string { return "shadow_decision" }
