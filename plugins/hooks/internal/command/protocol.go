package command

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/hook"
)

// Event names as the hook protocol spells them.
const (
	eventPermissionRequest = "PermissionRequest"
	eventPreToolUse        = "PreToolUse"
)

// input is the JSON object the program reads on stdin.
type input struct {
	SessionID      string          `json:"session_id"`
	TurnID         string          `json:"turn_id"`
	TranscriptPath *string         `json:"transcript_path"` // always null: toolgate keeps no transcript file
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	Model          string          `json:"model"`
	PermissionMode string          `json:"permission_mode"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	Toolgate       toolgateInput   `json:"toolgate"`
}

// toolgateInput carries what toolgate knows beyond the Codex fields.
type toolgateInput struct {
	Server          string           `json:"server"`
	Tool            string           `json:"tool"`
	ToolTitle       string           `json:"tool_title,omitempty"`
	ToolDescription string           `json:"tool_description,omitempty"`
	Annotations     *annotationsJSON `json:"annotations"`
	ApprovalMode    string           `json:"approval_mode"`
	Policy          string           `json:"policy"`
	Permissions     string           `json:"permissions"`
}

type annotationsJSON struct {
	ReadOnlyHint    bool   `json:"readOnlyHint"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
	IdempotentHint  bool   `json:"idempotentHint"`
	Title           string `json:"title,omitempty"`
}

// toolName is the flat model name the program matches on.
func toolName(req hook.Request) string {
	if req.ModelName != "" {
		return req.ModelName
	}
	return "mcp__" + req.Server + "__" + req.Tool
}

func buildInput(event string, req hook.Request) ([]byte, error) {
	args := bytes.TrimSpace(req.Arguments)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = []byte("{}")
	}
	if !json.Valid(args) {
		return nil, errors.New("build hook input: the call's arguments are not valid JSON")
	}
	mode := "default"
	if req.Policy == "never" {
		mode = "bypassPermissions"
	}
	in := input{
		SessionID:      req.SessionID,
		TurnID:         req.CallID,
		Cwd:            req.Cwd,
		HookEventName:  event,
		PermissionMode: mode,
		ToolName:       toolName(req),
		ToolInput:      args,
		ToolUseID:      req.CallID,
		Toolgate: toolgateInput{
			Server: req.Server, Tool: req.Tool, ToolTitle: req.ToolTitle, ToolDescription: req.ToolDescription,
			ApprovalMode: req.ApprovalMode, Policy: req.Policy, Permissions: req.Permissions,
		},
	}
	in.Toolgate.Annotations = annotationsOf(req.Annotations)
	out, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("build hook input: %w", err)
	}
	return append(out, '\n'), nil
}

// output is what the program may print on stdout (exit 0). Unknown fields
// are ignored, as Codex and Claude Code do; known fields with wrong values
// fail the hook.
type output struct {
	Continue           *bool           `json:"continue"`
	StopReason         string          `json:"stopReason"`
	SystemMessage      string          `json:"systemMessage"`
	Decision           *string         `json:"decision"` // legacy: "block" | "approve"
	Reason             string          `json:"reason"`
	HookSpecificOutput *specificOutput `json:"hookSpecificOutput"`
}

type specificOutput struct {
	HookEventName string `json:"hookEventName"`
	// PermissionRequest.
	Decision *permissionDecision `json:"decision"`
	// PreToolUse.
	PermissionDecision       *string         `json:"permissionDecision"`
	PermissionDecisionReason string          `json:"permissionDecisionReason"`
	UpdatedInput             json.RawMessage `json:"updatedInput"`
}

type permissionDecision struct {
	Behavior           string          `json:"behavior"`
	Message            string          `json:"message"`
	UpdatedInput       json.RawMessage `json:"updatedInput"`
	UpdatedPermissions json.RawMessage `json:"updatedPermissions"`
	Interrupt          *bool           `json:"interrupt"`
}

// errProtocol marks output that breaks the hook protocol.
var errProtocol = errors.New("hook output breaks the protocol")

func protocolError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errProtocol, fmt.Sprintf(format, args...))
}

// parseOutput decodes non-empty stdout.
func parseOutput(stdout []byte) (output, error) {
	var out output
	dec := json.NewDecoder(bytes.NewReader(stdout))
	if err := dec.Decode(&out); err != nil {
		return output{}, protocolError("stdout is not a JSON object (%v); print nothing for no decision, or a single JSON object", err)
	}
	if dec.More() {
		return output{}, protocolError("stdout holds more than one JSON value; print a single JSON object")
	}
	if h := out.HookSpecificOutput; h != nil && h.HookEventName == "" {
		return output{}, protocolError("hookSpecificOutput has no hookEventName")
	}
	return out, nil
}

// stopped reports the universal "continue": false, which stops the call.
func (o output) stopped() (string, bool) {
	if o.Continue != nil && !*o.Continue {
		return o.StopReason, true
	}
	return "", false
}

// permissionResult maps stdout to a PermissionRequest answer.
func permissionResult(stdout []byte, deniedBy string) (hook.PermissionResult, error) {
	out, err := parseOutput(stdout)
	if err != nil {
		return hook.PermissionResult{}, err
	}
	if reason, ok := out.stopped(); ok {
		return hook.Deny(orDefault(reason, deniedBy)), nil
	}
	if h := out.HookSpecificOutput; h != nil {
		if h.HookEventName != eventPermissionRequest {
			return hook.PermissionResult{}, protocolError("hookSpecificOutput.hookEventName is %q in answer to a PermissionRequest event", h.HookEventName)
		}
		if h.Decision == nil {
			return hook.NoDecision(), nil
		}
		d := h.Decision
		switch {
		case len(d.UpdatedInput) > 0 && !isNull(d.UpdatedInput):
			return hook.PermissionResult{}, protocolError("decision.updatedInput is reserved in PermissionRequest; rewrite arguments in a PreToolUse hook")
		case len(d.UpdatedPermissions) > 0 && !isNull(d.UpdatedPermissions):
			return hook.PermissionResult{}, protocolError("decision.updatedPermissions is reserved and not supported")
		case d.Interrupt != nil && *d.Interrupt:
			return hook.PermissionResult{}, protocolError("decision.interrupt is reserved and not supported")
		}
		switch d.Behavior {
		case "allow":
			return hook.Allow(d.Message), nil
		case "deny":
			return hook.Deny(orDefault(d.Message, deniedBy)), nil
		}
		return hook.PermissionResult{}, protocolError(`decision.behavior must be "allow" or "deny", not %q`, d.Behavior)
	}
	if out.Decision != nil {
		switch *out.Decision {
		case "block", "deny":
			return hook.Deny(orDefault(out.Reason, deniedBy)), nil
		case "approve", "allow":
			return hook.Allow(out.Reason), nil
		}
		return hook.PermissionResult{}, protocolError(`decision must be "block" or "approve", not %q`, *out.Decision)
	}
	return hook.NoDecision(), nil
}

// preToolUseResult maps stdout to a PreToolUse answer.
func preToolUseResult(stdout []byte, deniedBy string) (hook.PreToolUseResult, error) {
	out, err := parseOutput(stdout)
	if err != nil {
		return hook.PreToolUseResult{}, err
	}
	if reason, ok := out.stopped(); ok {
		return hook.Block(orDefault(reason, deniedBy)), nil
	}
	if h := out.HookSpecificOutput; h != nil {
		if h.HookEventName != eventPreToolUse {
			return hook.PreToolUseResult{}, protocolError("hookSpecificOutput.hookEventName is %q in answer to a PreToolUse event", h.HookEventName)
		}
		decision := ""
		if h.PermissionDecision != nil {
			decision = *h.PermissionDecision
		}
		switch decision {
		case "deny", "block":
			return hook.Block(orDefault(h.PermissionDecisionReason, deniedBy)), nil
		case "", "allow", "approve", "ask":
		default:
			return hook.PreToolUseResult{}, protocolError(`permissionDecision must be "allow", "deny" or "ask", not %q`, decision)
		}
		if len(h.UpdatedInput) > 0 && !isNull(h.UpdatedInput) {
			args := bytes.TrimSpace(h.UpdatedInput)
			if args[0] != '{' {
				return hook.PreToolUseResult{}, protocolError("updatedInput must be a JSON object (the complete new arguments)")
			}
			return hook.Rewrite(json.RawMessage(args), orDefault(h.PermissionDecisionReason, "arguments rewritten by the hook command")), nil
		}
		return hook.Continue(), nil
	}
	if out.Decision != nil {
		switch *out.Decision {
		case "block", "deny":
			return hook.Block(orDefault(out.Reason, deniedBy)), nil
		case "approve", "allow":
			return hook.Continue(), nil
		}
		return hook.PreToolUseResult{}, protocolError(`decision must be "block" or "approve", not %q`, *out.Decision)
	}
	return hook.Continue(), nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// annotationsOf spells the tool's annotations as MCP does on the wire.
func annotationsOf(a *sdk.Annotations) *annotationsJSON {
	if a == nil {
		return nil
	}
	return &annotationsJSON{ReadOnlyHint: a.ReadOnly, DestructiveHint: a.Destructive, OpenWorldHint: a.OpenWorld, IdempotentHint: a.Idempotent, Title: a.Title}
}
