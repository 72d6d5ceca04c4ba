package hook

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/sdk"
)

// Hook is implemented by hook plugins and by the host-side [Client].
type Hook interface {
	// PreToolUse decides whether a proposed call continues, is blocked, or
	// runs with rewritten arguments.
	PreToolUse(ctx context.Context, req Request) (PreToolUseResult, error)
	// PermissionRequest decides, or declines to decide, whether a call that
	// needs approval may run.
	PermissionRequest(ctx context.Context, req Request) (PermissionResult, error)
	// PostToolUse sees a finished call and may add a note for the model.
	PostToolUse(ctx context.Context, req Request, result ToolResult) (PostToolUseResult, error)
}

// Base answers every event with "no opinion". Embed it in a hook to
// implement only the events it cares about, and list those in
// [EventLister].
type Base struct{}

// PreToolUse lets the call continue.
func (Base) PreToolUse(context.Context, Request) (PreToolUseResult, error) {
	return Continue(), nil
}

// PermissionRequest makes no decision.
func (Base) PermissionRequest(context.Context, Request) (PermissionResult, error) {
	return NoDecision(), nil
}

// PostToolUse adds no note.
func (Base) PostToolUse(context.Context, Request, ToolResult) (PostToolUseResult, error) {
	return PostToolUseResult{}, nil
}

// Event names one hook event. Its value is the capability a hook lists in
// its Info.
type Event string

// Hook events.
const (
	EventPreToolUse        Event = "pre_tool_use"
	EventPermissionRequest Event = "permission_request"
	EventPostToolUse       Event = "post_tool_use"
	// EventPreResourceRead and EventPrePromptGet are the events of
	// [ResourceReadHook] and [PromptGetHook]; a hook handles them only
	// when it implements that interface.
	EventPreResourceRead Event = "pre_resource_read"
	EventPrePromptGet    Event = "pre_prompt_get"
)

// AllEvents lists the tool-call events every [Hook] handles, in the order
// the host runs them. The request events (EventPreResourceRead,
// EventPrePromptGet) are not in it: they belong to optional interfaces,
// so that a hook written before they existed is never asked about them.
var AllEvents = []Event{EventPreToolUse, EventPermissionRequest, EventPostToolUse}

// EventLister may be implemented by a hook that handles only some events.
// The host calls the hook only for the events listed. Without it, the hook
// is called for every event of [AllEvents], and for the request events of
// the optional interfaces it implements.
type EventLister interface {
	Events() []Event
}

// ResourceReadHook is implemented by a hook that decides on the
// resources/read requests of clients, before they reach the server. It
// answers [Continue] or [Block] (a rewrite is refused as a bad answer).
// There is no approval after it: reads are never put to a reviewer.
type ResourceReadHook interface {
	PreResourceRead(ctx context.Context, req ResourceRequest) (PreToolUseResult, error)
}

// PromptGetHook is implemented by a hook that decides on the prompts/get
// requests of clients, before they reach the server. It answers
// [Continue] or [Block].
type PromptGetHook interface {
	PrePromptGet(ctx context.Context, req PromptRequest) (PreToolUseResult, error)
}

// ResourceRequest describes one resources/read a client sent.
type ResourceRequest struct {
	// Server is the name of the server block that owns the resource.
	Server string
	// URI is the resource's URI as its server knows it; ClientURI is the
	// one the client used when the host rewrote it ("" when the same).
	URI, ClientURI string
	// SessionID identifies the host session; CallID this request.
	SessionID, CallID string
	// Cwd is the session's working directory.
	Cwd string
	// Caller is who asked; nil when the host does not know.
	Caller *sdk.Caller
}

// PromptRequest describes one prompts/get a client sent.
type PromptRequest struct {
	// Server is the name of the server block that owns the prompt.
	Server string
	// Prompt is the prompt's name on its server; ModelName the name the
	// client used.
	Prompt, ModelName string
	// Arguments are the prompt's arguments.
	Arguments map[string]string
	// SessionID identifies the host session; CallID this request.
	SessionID, CallID string
	// Cwd is the session's working directory.
	Cwd string
	// Caller is who asked; nil when the host does not know.
	Caller *sdk.Caller
}

// Request describes one call the model proposed.
type Request struct {
	// Server is the name of the server block that owns the tool.
	Server string
	// Tool is the tool's raw name on its server, e.g. "write_file".
	Tool string
	// ModelName is the flat name the model called, e.g.
	// "mcp__files__write_file".
	ModelName string
	// Arguments is the call's argument object ("{}" when the model gave
	// none).
	Arguments json.RawMessage
	// Annotations are the tool's MCP annotations; nil when the server
	// declared none.
	Annotations *sdk.Annotations
	// ToolTitle and ToolDescription are the tool's, as its server gave them.
	ToolTitle       string
	ToolDescription string
	// ApprovalMode is the tool's effective approval mode: "auto", "prompt",
	// "writes" or "approve".
	ApprovalMode string
	// Policy is the approval policy: "untrusted", "on-request" or "never".
	Policy string
	// Permissions is the permission profile: "read-only", "workspace-write"
	// or "full-access".
	Permissions string
	// SessionID identifies the host session; CallID this call.
	SessionID string
	CallID    string
	// Cwd is the session's working directory.
	Cwd string
	// Caller is who made the call; nil when the host does not know
	// (stdio, or a gateway without an auth block).
	Caller *sdk.Caller
}

// Action is what PreToolUse does with a call.
type Action int

// Actions. The zero value is ActionContinue.
const (
	ActionContinue Action = iota
	ActionBlock
	ActionRewrite
)

func (a Action) String() string {
	switch a {
	case ActionContinue:
		return "continue"
	case ActionBlock:
		return "block"
	case ActionRewrite:
		return "rewrite"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// PreToolUseResult is a hook's verdict on a proposed call. Build it with
// [Continue], [Block] or [Rewrite].
type PreToolUseResult struct {
	Action Action
	// Reason is, for ActionBlock, the text the model gets instead of a
	// result; for ActionRewrite, why the arguments changed (audit log).
	Reason string
	// Arguments is, for ActionRewrite, the complete new argument object.
	Arguments json.RawMessage
}

// Continue lets the call go on unchanged.
func Continue() PreToolUseResult { return PreToolUseResult{Action: ActionContinue} }

// Block refuses the call; reason is given to the model, so it should say
// why and what the model may do instead.
func Block(reason string) PreToolUseResult {
	return PreToolUseResult{Action: ActionBlock, Reason: reason}
}

// Rewrite runs the call with args (a complete JSON object) instead of the
// model's arguments; reason is recorded in the audit log.
func Rewrite(args json.RawMessage, reason string) PreToolUseResult {
	return PreToolUseResult{Action: ActionRewrite, Arguments: args, Reason: reason}
}

// Decision is a hook's answer to a permission request.
type Decision int

// Decisions. The zero value is DecisionNone.
const (
	// DecisionNone leaves the decision to later hooks and the reviewer.
	DecisionNone Decision = iota
	// DecisionAllow approves the call unless another hook denies it.
	DecisionAllow
	// DecisionDeny refuses the call at once.
	DecisionDeny
)

func (d Decision) String() string {
	switch d {
	case DecisionNone:
		return "none"
	case DecisionAllow:
		return "allow"
	case DecisionDeny:
		return "deny"
	}
	return fmt.Sprintf("Decision(%d)", int(d))
}

// PermissionResult is a hook's answer to a permission request. Build it
// with [NoDecision], [Allow] or [Deny].
type PermissionResult struct {
	Decision Decision
	// Message explains the decision; for a denial it is given to the model.
	Message string
}

// NoDecision leaves the decision to later hooks and the reviewer.
func NoDecision() PermissionResult { return PermissionResult{Decision: DecisionNone} }

// Allow approves the call unless another hook denies it.
func Allow(message string) PermissionResult {
	return PermissionResult{Decision: DecisionAllow, Message: message}
}

// Deny refuses the call; message is given to the model.
func Deny(message string) PermissionResult {
	return PermissionResult{Decision: DecisionDeny, Message: message}
}

// ToolResult is the outcome of a finished call as the host recorded it.
type ToolResult struct {
	// JSON is the MCP CallToolResult in the host's event projection (at
	// most 1 MiB); nil when no result came back.
	JSON json.RawMessage
	// IsError is true when the call failed (the server said isError, or no
	// result came back).
	IsError bool
	// Error is the host's error text when no result came back.
	Error string
	// Duration is the call's wall time.
	Duration time.Duration
}

// PostToolUseResult may carry a note for the model.
type PostToolUseResult struct {
	// Note, when not empty, is appended to the result the model sees.
	Note string
}
