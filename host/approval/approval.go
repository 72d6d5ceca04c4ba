package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/identity"
)

// Request is one concrete tool call awaiting a verdict.
type Request struct {
	CallID, SessionID string
	// Server and Tool are the raw route (what goes on the wire); ModelName
	// is the flat name the model used.
	Server, Tool, ModelName string
	// Arguments is the JSON object that will be sent if the call runs.
	Arguments json.RawMessage
	// Annotations are the tool's hints; nil means the server declared none
	// (which the annotation rule treats as "may be destructive").
	Annotations        *mcp.ToolAnnotations
	Title, Description string
	// InputSchema is the tool's input schema; with the raw name,
	// Description and Annotations it makes the definition a remembered
	// approval is bound to (see [DefinitionHash]).
	InputSchema any
	// Caller is who made the call (toolgate serve with auth); nil when
	// unknown. Hooks and the Guardian see it.
	Caller *identity.Caller
	// URI is the raw URI of a resource read; PromptArguments the
	// arguments of a prompt get (Tool is then the prompt's raw name).
	// Only the request hooks ([Procedure.PreResourceRead],
	// [Procedure.PrePromptGet]) read them.
	URI             string
	PromptArguments map[string]string

	// Event is the request as the events record it (kind, client, trace
	// id); the procedure's approval_decision events carry it. Zero means
	// the fields above.
	Event events.Call

	// Asker answers the user step for this request: the session it came
	// from (see pipeline.Upstream). nil means Options.Asker.
	Asker Asker

	// Mode and Policy are filled in by [Procedure.Decide] before hooks,
	// the reviewer and the user see the request, so they can tell how the
	// host got there. Values set by the caller are overwritten.
	Mode   config.ApprovalMode
	Policy config.Policy
}

// call is the request as its events name it.
func (r Request) call() events.Call {
	if r.Event.CallID != "" {
		return r.Event
	}
	return events.Call{CallID: r.CallID, SessionID: r.SessionID, Server: r.Server, Tool: r.Tool, ModelName: r.ModelName, Caller: r.Caller}
}

// DecisionStep names the step that decided a request. It is recorded in
// [Decision.Step], events.ApprovalDecision.Step and tool_call_end's
// decision_step, and read back by replay, the inbox and audit queries.
// Every value lives here, including the ones the pipeline decides before
// or instead of the procedure, so the vocabulary has one home.
type DecisionStep string

// Steps of the procedure.
const (
	StepMode        DecisionStep = "mode"
	StepAnnotations DecisionStep = "annotations"
	StepSession     DecisionStep = "session"
	StepHook        DecisionStep = "hook"
	StepReviewer    DecisionStep = "guardian"
	StepUser        DecisionStep = "user"
	// StepPreToolUse is a PreToolUse hook blocking or rewriting a call
	// before the procedure.
	StepPreToolUse DecisionStep = "pre_tool_use"
	// StepPreResourceRead and StepPrePromptGet are a request hook blocking
	// a resource read or a prompt get.
	StepPreResourceRead DecisionStep = "pre_resource_read"
	StepPrePromptGet    DecisionStep = "pre_prompt_get"
	// StepAudit is the host refusing a call because the audit log cannot
	// be written (audit { on_error = "deny" }).
	StepAudit DecisionStep = "audit"
)

// Steps the pipeline (host/pipeline) decides without the procedure.
const (
	// StepRateLimit is a request a rate limit refused before approval.
	StepRateLimit DecisionStep = "rate_limit"
	// StepAdmit is a request admitted without approval (sampling and
	// elicitation), or refused by its admission check.
	StepAdmit DecisionStep = "admit"
	// StepHost is a call of the host's own tool (tool_search).
	StepHost DecisionStep = "host"
)

// Decision is the procedure's verdict on one call. The zero value is a
// denial, so a code path that forgets to fill it in fails closed.
type Decision struct {
	Approved bool
	// Step is the step that decided.
	Step DecisionStep
	// By is who decided: "host", a hook's name, the reviewer's name, or
	// "user".
	By string
	// Text is, for a denial, the literal text the model receives as the
	// call's result.
	Text string
}

// Choice is one answer to an approval prompt. The zero value is a
// decline, so an Asker that returns nothing meaningful denies.
type Choice int

const (
	ChoiceDecline Choice = iota
	ChoiceAllow
	ChoiceAllowSession
	ChoiceAllowAlways
	ChoiceCancel
)

// String returns the label shown to the user (the labels are the ones
// users of other MCP hosts already know).
func (c Choice) String() string {
	switch c {
	case ChoiceDecline:
		return "Decline"
	case ChoiceAllow:
		return "Allow"
	case ChoiceAllowSession:
		return "Allow for this session"
	case ChoiceAllowAlways:
		return "Allow and don't ask me again"
	case ChoiceCancel:
		return "Cancel"
	}
	return fmt.Sprintf("Choice(%d)", int(c))
}

// Prompt is what an [Asker] shows a human for one call.
type Prompt struct {
	Request
	// Mode is the resolved approval mode (the same as Request.Mode).
	Mode config.ApprovalMode
	// Question is `Allow the <server> MCP server to run tool "<tool>"?`.
	Question string
	// Choices may be offered, in display order. An answer outside this
	// list is treated as Allow at most (see [Procedure.Decide]).
	Choices []Choice
}

// Elicitation is a server-initiated elicitation/create that arrived while
// one of the server's calls was running.
type Elicitation struct {
	Server string
	Params *mcp.ElicitParams
}

// Asker is whoever can answer the user path of one request: the human
// end of the session it came from (pipeline.Upstream embeds it: the
// terminal, a toolgate serve session, the held-approval inbox), or a
// test. It travels on the [Request]. Implementations may be called
// concurrently and serialize their own prompts.
//
// Both methods return promptly when ctx ends, with an error wrapping
// ctx.Err(). When no human can be reached they return an error wrapping
// [ErrNobodyToAsk].
type Asker interface {
	AskApproval(ctx context.Context, p Prompt) (Choice, error)
	Elicit(ctx context.Context, e Elicitation) (*mcp.ElicitResult, error)
}

// ErrNobodyToAsk is returned (wrapped, with the reason, e.g. "stdin is not
// a terminal") by an [Asker] that cannot reach a human. The procedure
// turns it into a denial that tells the user how to configure an
// approver; Elicit turns it into a decline.
var ErrNobodyToAsk = errors.New("nobody to ask")

// NobodyToAsk is an [ErrNobodyToAsk] that knows what this user can do
// instead. Front ends where "run toolgate in an interactive terminal"
// does not apply (toolgate serve) return it, and the denial text then
// says Next instead of the terminal's advice.
type NobodyToAsk struct {
	// Why no human could be asked.
	Why string
	// Next is what the user can do, with the exact config lines.
	Next string
}

func (e *NobodyToAsk) Error() string { return ErrNobodyToAsk.Error() + ": " + e.Why }
func (e *NobodyToAsk) Unwrap() error { return ErrNobodyToAsk }

// AskerDenial is returned by an [Asker] that reached a human some other
// way than a prompt it waits on (package inbox: a browser, the terminal,
// a chat message), or that parked the call for later: Text is the denial
// the model receives, and says what the user can do next. By names who
// decided ("user", or the approver).
type AskerDenial struct {
	By   string
	Text string
}

func (d *AskerDenial) Error() string { return d.Text }

// HookDecision is a PermissionRequest hook's answer. The zero value is "no
// decision".
type HookDecision int

const (
	HookNone HookDecision = iota
	HookAllow
	HookDeny
)

func (d HookDecision) String() string {
	switch d {
	case HookNone:
		return "none"
	case HookAllow:
		return "allow"
	case HookDeny:
		return "deny"
	}
	return fmt.Sprintf("HookDecision(%d)", int(d))
}

// HookVerdict is what a PermissionRequest hook answered. Message is the
// denial text for the model (HookDeny only; empty = a default text).
type HookVerdict struct {
	Decision HookDecision
	Message  string
}

// Hook is a PermissionRequest hook (step 5). The plugin host adapts hook
// plugins to this interface and applies each plugin's timeout.
type Hook interface {
	Name() string
	// OnError says what a failure means: config.OnErrorDeny (the default,
	// also used for any unknown value) or config.OnErrorSkip.
	OnError() config.OnError
	PermissionRequest(ctx context.Context, r Request) (HookVerdict, error)
}

// Assessment is the reviewer's answer. Outcome must be exactly "allow" or
// "deny"; anything else fails closed.
type Assessment struct {
	Outcome           string // allow | deny
	RiskLevel         string // low | medium | high | critical
	UserAuthorization string // unknown | low | medium | high
	Rationale         string
}

// Assessment outcomes.
const (
	OutcomeAllow = "allow"
	OutcomeDeny  = "deny"
)

// Reviewer is the automatic approval reviewer (the Guardian, step 6).
type Reviewer interface {
	Name() string
	Review(ctx context.Context, r Request) (Assessment, error)
}

// ErrReviewTimeout is returned (wrapped) by a [Reviewer] whose deadline
// passed. The procedure denies with a text that invites one retry,
// because a timeout says nothing about the call's risk.
var ErrReviewTimeout = errors.New("approval review timed out")
