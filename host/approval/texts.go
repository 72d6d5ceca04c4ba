package approval

import (
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/host/config"
)

// Literal denial texts the model receives. They are pinned by tests
// because models (and users reading transcripts) learn to react to them.
const (
	TextPolicyNever   = "MCP tool call requires approval, but approval policy is never"
	TextUserRejected  = "user rejected MCP tool call"
	TextUserCancelled = "user cancelled MCP tool call"
	TextReviewTimeout = "The automatic permission approval review did not finish before its deadline. " +
		"Do not assume the action is unsafe based on the timeout alone. " +
		"You may retry once, or ask the user for guidance or explicit approval."
)

// question is the prompt's one-line question.
func question(server, tool string) string {
	return "Allow the " + server + " MCP server to run tool \"" + tool + "\"?"
}

func hookDeniedText(name, message string) string {
	if strings.TrimSpace(message) != "" {
		return message
	}
	return fmt.Sprintf("denied by permission hook %q", name)
}

func hookFailedText(name string, err error) string {
	return fmt.Sprintf("permission hook %q failed: %v; the call was denied (on_error = %q)", name, err, config.OnErrorDeny)
}

func reviewDeniedText(rationale string) string {
	if strings.TrimSpace(rationale) == "" {
		rationale = "no reason given"
	}
	return "This action was rejected due to unacceptable risk.\nReason: " + rationale +
		"\nDo not try to work around this decision. " +
		"Proceed only with a materially safer alternative, or ask the user for explicit approval."
}

func reviewFailedText(msg string) string {
	return "Automatic approval review failed: " + msg
}

const noGuardianText = `MCP tool call denied: the approval block sets reviewer = "guardian", but no guardian plugin is configured. ` +
	`Add a plugin block with kind = "guardian" (and name it in approval { guardian = "<name>" } if there are several), ` +
	`or set reviewer = "user" in the approval block.`

// nobodyToAskText explains why no human could answer and lists every way
// to configure one, naming the exact config line for this tool.
func nobodyToAskText(server, tool, why string) string {
	return fmt.Sprintf("MCP tool call denied: approval was required, but nobody could be asked (%s). "+
		"To approve such calls, run toolgate in an interactive terminal, configure a permission hook "+
		"or the Guardian reviewer (approval { reviewer = \"guardian\" }), or allow this tool without asking "+
		"by adding tool %q { approval_mode = %q } to the server %q block.",
		why, tool, config.ModeApprove, server)
}

// nobodyToAskNextText is the denial for a front end that said what this
// user can do instead of asking.
func nobodyToAskNextText(n *NobodyToAsk) string {
	return "MCP tool call denied: approval was required, but nobody could be asked (" + n.Why + "). " + n.Next
}

func askFailedText(err error) string {
	return fmt.Sprintf("MCP tool call denied: the approval prompt failed (%v)", err)
}

func unknownChoiceText(c Choice) string {
	return fmt.Sprintf("MCP tool call denied: the approval prompt returned an unknown answer (%s)", c)
}

func auditFailedText(err error) string {
	return fmt.Sprintf("toolgate refused this call because its audit log cannot be written (%v), "+
		"and audit { on_error = \"deny\" } lets nothing run unrecorded. "+
		"Do not retry until the user has fixed the audit log (free disk space, or fix the file's permissions).", err)
}
