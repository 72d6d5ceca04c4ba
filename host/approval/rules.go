package approval

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
)

// ResolveMode returns the approval mode of a tool: its own
// `tool "<raw>" { approval_mode }`, else the server's
// default_tools_approval_mode, else auto.
func ResolveMode(s config.Server, tool string) config.ApprovalMode {
	if tc, ok := s.Tools[tool]; ok && tc.ApprovalMode != "" {
		return tc.ApprovalMode
	}
	if s.DefaultToolsApprovalMode != "" {
		return s.DefaultToolsApprovalMode
	}
	return config.ModeAuto
}

// AutoApproved reports whether a call is approved without looking at it:
// mode approve (under any policy), or policy never with full-access
// permissions (the user chose to be asked nothing and allowed everything).
func AutoApproved(a config.Approval, mode config.ApprovalMode) bool {
	if mode == config.ModeApprove {
		return true
	}
	return a.Policy == config.PolicyNever && a.Permissions == config.PermFullAccess
}

// RequiresApproval reports whether a call in this mode, to a tool with
// these annotations, needs a verdict from hooks, the reviewer or the user.
//
//   - approve: never.
//   - prompt: always.
//   - writes: unless readOnlyHint is true.
//   - auto and remembered: destructiveHint true → required (even when also read-only);
//     readOnlyHint true → not required; otherwise required unless both
//     destructiveHint and openWorldHint are explicitly false. Absent
//     annotations use the MCP defaults (destructive, open-world), so they
//     are required.
//
// An unknown mode requires approval: a typo must not open the gate.
func RequiresApproval(mode config.ApprovalMode, a *mcp.ToolAnnotations) bool {
	switch mode {
	case config.ModeApprove:
		return false
	case config.ModePrompt:
		return true
	case config.ModeWrites:
		return a == nil || !a.ReadOnlyHint
	case config.ModeAuto, config.ModeRemembered:
		if a == nil {
			return true
		}
		if a.DestructiveHint != nil && *a.DestructiveHint {
			return true
		}
		if a.ReadOnlyHint {
			return false
		}
		return hintOr(a.DestructiveHint, true) || hintOr(a.OpenWorldHint, true)
	}
	return true
}

func hintOr(h *bool, absent bool) bool {
	if h == nil {
		return absent
	}
	return *h
}
