package pluginhost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/identity"
	"github.com/toolgate/toolgate/internal/glob"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/hook"
)

// Hook events as a plugin block's events = [...] spells them.
const (
	EventPreToolUse        = "PreToolUse"
	EventPermissionRequest = "PermissionRequest"
	EventPostToolUse       = "PostToolUse"
	EventPreResourceRead   = "PreResourceRead"
	EventPrePromptGet      = "PrePromptGet"
)

// Hook adapts a hook plugin block to approval.Hook (PermissionRequest),
// and offers the other two events for the pre- and post-call steps.
//
// Every method applies the block's timeout to the whole call (waiting for
// the plugin to start included), and asks the plugin only when the call
// matches the block's match blocks and events list; otherwise it answers
// "no opinion" without starting anything. A plugin that fails — crashes,
// times out, answers what the protocol does not allow — returns an error,
// never an approval: the caller applies on_error ([Hook.OnError]).
//
// A Hook is safe for concurrent use.
type Hook struct {
	in          *instance
	block       config.Plugin
	permissions config.Permissions
	cwd         string
	match       []matcher
	// badMatch is set when a match block does not compile; every event
	// then fails with it.
	badMatch error
}

var _ approval.Hook = (*Hook)(nil)

type matcher struct {
	server, tool *glob.Pattern  // nil: any
	re           *regexp.Regexp // nil: any
}

func newHook(in *instance, p config.Plugin, perms config.Permissions, cwd string) *Hook {
	h := &Hook{in: in, block: p, permissions: perms, cwd: cwd}
	for _, m := range p.Match {
		mm, err := compileMatch(m)
		if err != nil {
			// config.Load rejects bad patterns with their file and line;
			// a block that bypassed it fails every call it is asked
			// about (on_error applies), rather than silently matching
			// nothing or everything.
			h.badMatch = fmt.Errorf("plugin %q: match block: %w", p.Name, err)
			break
		}
		h.match = append(h.match, mm)
	}
	return h
}

func compileMatch(m config.HookMatch) (matcher, error) {
	var mm matcher
	for _, f := range []struct {
		src string
		dst **glob.Pattern
	}{{m.Server, &mm.server}, {m.Tool, &mm.tool}} {
		if f.src == "" {
			continue
		}
		g, err := glob.Compile(f.src)
		if err != nil {
			return matcher{}, err
		}
		*f.dst = &g
	}
	if m.Regex != "" {
		re, err := regexp.Compile(m.Regex)
		if err != nil {
			return matcher{}, fmt.Errorf("regex %q: %w", m.Regex, err)
		}
		mm.re = re
	}
	return mm, nil
}

// Name is the plugin block's name.
func (h *Hook) Name() string { return h.block.Name }

// OnError is the block's on_error.
func (h *Hook) OnError() config.OnError { return h.block.OnError }

// Applies reports whether the block asks for event (one of the Event*
// constants) on this call: its events list names the event (or is empty)
// and one of its match blocks selects the tool (or there are none).
func (h *Hook) Applies(event string, r approval.Request) bool {
	if len(h.block.Events) > 0 && !slices.Contains(h.block.Events, event) {
		return false
	}
	if len(h.match) == 0 {
		return true
	}
	for _, m := range h.match {
		if m.matches(r) {
			return true
		}
	}
	return false
}

func (m matcher) matches(r approval.Request) bool {
	if m.server != nil && !m.server.Match(r.Server) {
		return false
	}
	if m.tool != nil && !m.tool.Match(r.Tool) {
		return false
	}
	return m.re == nil || m.re.MatchString(r.ModelName)
}

// PermissionRequest asks the plugin whether a call that needs approval
// may run.
func (h *Hook) PermissionRequest(ctx context.Context, r approval.Request) (approval.HookVerdict, error) {
	res, asked, err := askPlugin(ctx, h, EventPermissionRequest, r, func(ctx context.Context, c *hook.Client) (hook.PermissionResult, error) {
		return c.PermissionRequest(ctx, hookRequest(r, h.permissions, h.cwd))
	})
	if err != nil || !asked {
		return approval.HookVerdict{}, err
	}
	switch res.Decision {
	case hook.DecisionNone:
		return approval.HookVerdict{Decision: approval.HookNone}, nil
	case hook.DecisionAllow:
		return approval.HookVerdict{Decision: approval.HookAllow}, nil
	case hook.DecisionDeny:
		return approval.HookVerdict{Decision: approval.HookDeny, Message: res.Message}, nil
	}
	return approval.HookVerdict{}, fmt.Errorf("%w: decision %s", sdk.ErrBadResponse, res.Decision)
}

// PreToolUse asks the plugin what to do with a proposed call. A failure
// is an error (the caller applies on_error), never a silent continue.
func (h *Hook) PreToolUse(ctx context.Context, r approval.Request) (approval.PreVerdict, error) {
	res, asked, err := askPlugin(ctx, h, EventPreToolUse, r, func(ctx context.Context, c *hook.Client) (hook.PreToolUseResult, error) {
		return c.PreToolUse(ctx, hookRequest(r, h.permissions, h.cwd))
	})
	if err != nil || !asked {
		return approval.PreVerdict{}, err
	}
	if res.Action == hook.ActionRewrite {
		if !isJSONObject(res.Arguments) {
			return approval.PreVerdict{}, fmt.Errorf("%w: a rewrite whose arguments are not a JSON object", sdk.ErrBadResponse)
		}
		return approval.PreVerdict{Action: approval.PreRewrite, Reason: res.Reason, Arguments: res.Arguments}, nil
	}
	return preVerdict(res)
}

// PostToolUse reports a finished call to the plugin and returns the note
// it attaches for the model, if any.
func (h *Hook) PostToolUse(ctx context.Context, r approval.Request, res approval.PostResult) (string, error) {
	tr := hook.ToolResult{IsError: res.IsError, Duration: res.Duration}
	if res.Err != nil {
		tr.Error = res.Err.Error()
	}
	out, _, err := askPlugin(ctx, h, EventPostToolUse, r, func(ctx context.Context, c *hook.Client) (hook.PostToolUseResult, error) {
		if res.Raw != nil {
			var err error
			if tr.JSON, err = json.Marshal(res.Raw); err != nil {
				return hook.PostToolUseResult{}, fmt.Errorf("encoding the result for PostToolUse: %w", err)
			}
		}
		return c.PostToolUse(ctx, hookRequest(r, h.permissions, h.cwd), tr)
	})
	return out.Note, err
}

// Matches reports whether the block's match blocks select the call (the
// events list is checked per event).
func (h *Hook) Matches(r approval.Request) bool {
	return h.Applies(EventPreToolUse, r) || h.Applies(EventPermissionRequest, r) || h.Applies(EventPostToolUse, r)
}

var (
	_ approval.PreToolUseHook   = (*Hook)(nil)
	_ approval.PostToolUseHook  = (*Hook)(nil)
	_ approval.ResourceReadHook = (*Hook)(nil)
	_ approval.PromptGetHook    = (*Hook)(nil)
)

// PreResourceRead asks the plugin whether a resource read may go on. The
// SDK client answers "continue" without a call when the plugin did not
// declare the event (a plugin older than it, say).
func (h *Hook) PreResourceRead(ctx context.Context, r approval.Request) (approval.PreVerdict, error) {
	return h.preRequest(ctx, EventPreResourceRead, r, func(ctx context.Context, c *hook.Client) (hook.PreToolUseResult, error) {
		req := hook.ResourceRequest{Server: r.Server, URI: r.URI, SessionID: r.SessionID, CallID: r.CallID,
			Cwd: h.cwd, Caller: sdkCaller(r.Caller)}
		if r.ModelName != r.URI {
			req.ClientURI = r.ModelName
		}
		return c.PreResourceRead(ctx, req)
	})
}

// PrePromptGet asks the plugin whether a prompt get may go on.
func (h *Hook) PrePromptGet(ctx context.Context, r approval.Request) (approval.PreVerdict, error) {
	return h.preRequest(ctx, EventPrePromptGet, r, func(ctx context.Context, c *hook.Client) (hook.PreToolUseResult, error) {
		return c.PrePromptGet(ctx, hook.PromptRequest{Server: r.Server, Prompt: r.Tool, ModelName: r.ModelName,
			Arguments: r.PromptArguments, SessionID: r.SessionID, CallID: r.CallID, Cwd: h.cwd, Caller: sdkCaller(r.Caller)})
	})
}

func (h *Hook) preRequest(ctx context.Context, event string, r approval.Request, ask func(context.Context, *hook.Client) (hook.PreToolUseResult, error)) (approval.PreVerdict, error) {
	res, asked, err := askPlugin(ctx, h, event, r, ask)
	if err != nil || !asked {
		return approval.PreVerdict{}, err
	}
	return preVerdict(res) // a read or a prompt get has no arguments to rewrite
}

// askPlugin sends one event to the hook's plugin: what every event shares
// is the match check, the block's per-call timeout, the plugin process
// and how a failure is reported. asked is false when the block does not
// select the request, and the plugin is then not started.
func askPlugin[T any](ctx context.Context, h *Hook, event string, r approval.Request, ask func(context.Context, *hook.Client) (T, error)) (res T, asked bool, err error) {
	if h.badMatch != nil {
		return res, false, h.badMatch
	}
	if !h.Applies(event, r) {
		return res, false, nil
	}
	ctx, cancel, timeout := bound(ctx, callTimeout(h.block))
	defer cancel()
	c, p, err := h.client(ctx)
	if err != nil {
		return res, false, timeout.failed(h.in, p, err)
	}
	if res, err = ask(ctx, c); err != nil {
		return res, false, timeout.failed(h.in, p, err)
	}
	return res, true, nil
}

// preVerdict maps a continue or block answer; any other action is a bad
// response for the event that got it.
func preVerdict(res hook.PreToolUseResult) (approval.PreVerdict, error) {
	switch res.Action {
	case hook.ActionContinue:
		return approval.PreVerdict{Action: approval.PreContinue}, nil
	case hook.ActionBlock:
		return approval.PreVerdict{Action: approval.PreBlock, Reason: res.Reason}, nil
	}
	return approval.PreVerdict{}, fmt.Errorf("%w: action %s", sdk.ErrBadResponse, res.Action)
}

func (h *Hook) client(ctx context.Context) (*hook.Client, *process, error) {
	p, err := h.in.acquire(ctx)
	if err != nil {
		return nil, nil, err
	}
	c, ok := p.plugin.(*hook.Client)
	if !ok {
		return nil, p, fmt.Errorf("%w: plugin %q is not a hook (got %T)", ErrIncompatible, h.block.Name, p.plugin)
	}
	return c, p, nil
}

// blockTimeout is the block's timeout a call runs under.
type blockTimeout struct {
	timeout time.Duration
	// endsCall is true when this timeout, not an earlier deadline of the
	// caller's ctx, ends the call.
	endsCall bool
}

// bound applies a block's timeout to a call.
func bound(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc, blockTimeout) {
	dl, ok := ctx.Deadline()
	l := blockTimeout{timeout: timeout, endsCall: !ok || time.Until(dl) > timeout}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	return ctx, cancel, l
}

// failed words a failed call for the denial text and the log: running
// out of the block's timeout names it, a crash the process's exit.
func (l blockTimeout) failed(in *instance, p *process, err error) error {
	if errors.Is(err, context.DeadlineExceeded) && l.endsCall {
		// The plugin may report the deadline a moment before this side's
		// timer fires: the error, not ctx.Err(), decides.
		return fmt.Errorf("no answer within %s (the timeout of plugin %q; raise timeout in its block if it needs longer): %w",
			l.timeout, in.blockName(), err)
	}
	return withExit(p, err)
}

// withExit adds how the plugin process ended to an error matching
// sdk.ErrPluginExited.
func withExit(p *process, err error) error {
	if p != nil && errors.Is(err, sdk.ErrPluginExited) {
		return fmt.Errorf("%w (%s); it is restarted on next use", err, exitOf(p))
	}
	return err
}

// exitOf waits briefly for the keeper to record how p ended: the SDK
// reports the exit a moment before the keeper has looked.
func exitOf(p *process) string {
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-p.gone:
		return p.exit
	case <-t.C:
		return "exit status not known yet"
	}
}

func hookRequest(r approval.Request, perms config.Permissions, cwd string) hook.Request {
	args := r.Arguments
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	return hook.Request{
		Server:          r.Server,
		Tool:            r.Tool,
		ModelName:       r.ModelName,
		Arguments:       args,
		Annotations:     annotations(r.Annotations),
		ToolTitle:       r.Title,
		ToolDescription: r.Description,
		ApprovalMode:    string(r.Mode),
		Policy:          string(r.Policy),
		Permissions:     string(perms),
		SessionID:       r.SessionID,
		CallID:          r.CallID,
		Cwd:             cwd,
		Caller:          sdkCaller(r.Caller),
	}
}

// sdkCaller is the plugin contract's copy of the caller; nil stays nil.
func sdkCaller(c *identity.Caller) *sdk.Caller {
	if c == nil {
		return nil
	}
	return &sdk.Caller{
		Subject: c.Subject, Issuer: c.Issuer, ClientID: c.ClientID, Email: c.Email,
		Groups: c.Groups, Scopes: c.Scopes, Claims: c.Claims,
	}
}

func annotations(a *mcp.ToolAnnotations) *sdk.Annotations {
	if a == nil {
		return nil
	}
	return &sdk.Annotations{
		ReadOnly:    a.ReadOnlyHint,
		Destructive: a.DestructiveHint,
		OpenWorld:   a.OpenWorldHint,
		Idempotent:  a.IdempotentHint,
		Title:       a.Title,
	}
}

func isJSONObject(b json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && m != nil
}
