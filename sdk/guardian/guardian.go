package guardian

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolgate/toolgate/sdk"
)

// Reviewer is implemented by Guardian plugins and by the host-side
// [Client].
type Reviewer interface {
	// Review assesses one proposed call and decides whether it may run.
	Review(ctx context.Context, action Action) (Verdict, error)
}

// Action is a tool call awaiting the Guardian's decision.
type Action struct {
	// Server is the name of the server block that owns the tool.
	Server string
	// Tool is the tool's raw name on its server.
	Tool string
	// Arguments is the call's argument object.
	Arguments json.RawMessage
	// Annotations are the tool's MCP annotations; nil when the server
	// declared none.
	Annotations *sdk.Annotations
	// ToolTitle and ToolDescription are the tool's, as its server gave them.
	ToolTitle       string
	ToolDescription string
	// History lists the session's most recent calls, oldest first.
	History []HistoryEntry
	// SessionID identifies the host session; CallID this call.
	SessionID string
	CallID    string
	// Caller is who made the call; nil when the host does not know
	// (stdio, or a gateway without an auth block).
	Caller *sdk.Caller
}

// HistoryEntry is one earlier call of the session.
type HistoryEntry struct {
	Server    string
	Tool      string
	Arguments json.RawMessage
	// Outcome is what became of the call: "denied", "completed" or
	// "failed"; other values may appear and are opaque.
	Outcome string
}

// Verdict is the Guardian's assessment of an action.
type Verdict struct {
	// Outcome is required: a Verdict without one is refused by the host
	// (which then denies the call).
	Outcome           Outcome
	RiskLevel         RiskLevel
	UserAuthorization UserAuthorization
	// Rationale explains the verdict in a sentence or two; for a denial it
	// is given to the model.
	Rationale string
}

// Outcome is the Guardian's decision.
type Outcome int

// Outcomes. The zero value is not an outcome: a Guardian must choose.
const (
	OutcomeUnspecified Outcome = iota
	OutcomeAllow
	OutcomeDeny
)

func (o Outcome) String() string {
	switch o {
	case OutcomeUnspecified:
		return "unspecified"
	case OutcomeAllow:
		return "allow"
	case OutcomeDeny:
		return "deny"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// RiskLevel is the Guardian's estimate of the harm an action could do.
type RiskLevel int

// Risk levels. The zero value means the Guardian did not say.
const (
	RiskUnspecified RiskLevel = iota
	// RiskLow: read-only or trivially reversible.
	RiskLow
	// RiskMedium: changes state, recoverable.
	RiskMedium
	// RiskHigh: hard to undo, or reaches outside the workspace.
	RiskHigh
	// RiskCritical: destructive or exfiltrating.
	RiskCritical
)

func (r RiskLevel) String() string {
	switch r {
	case RiskUnspecified:
		return "unspecified"
	case RiskLow:
		return "low"
	case RiskMedium:
		return "medium"
	case RiskHigh:
		return "high"
	case RiskCritical:
		return "critical"
	}
	return fmt.Sprintf("RiskLevel(%d)", int(r))
}

// UserAuthorization is how clearly the user asked for an action.
type UserAuthorization int

// User authorization levels. The zero value is AuthorizationUnknown.
const (
	// AuthorizationUnknown: no evidence either way.
	AuthorizationUnknown UserAuthorization = iota
	// AuthorizationLow: at most implied by the user's request.
	AuthorizationLow
	// AuthorizationMedium: clearly within what the user asked for.
	AuthorizationMedium
	// AuthorizationHigh: the user asked for exactly this.
	AuthorizationHigh
)

func (u UserAuthorization) String() string {
	switch u {
	case AuthorizationUnknown:
		return "unknown"
	case AuthorizationLow:
		return "low"
	case AuthorizationMedium:
		return "medium"
	case AuthorizationHigh:
		return "high"
	}
	return fmt.Sprintf("UserAuthorization(%d)", int(u))
}
