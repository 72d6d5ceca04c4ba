package policy

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/plugins/internal/configdiag"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/hook"
)

// Policy is the hook. Create it with [New].
type Policy struct {
	hook.Base
	logger hclog.Logger
	rules  atomic.Pointer[ruleSet] // nil until a configuration is accepted
}

// Interfaces the plugin implements, checked at compile time.
var (
	_ hook.Hook             = (*Policy)(nil)
	_ hook.EventLister      = (*Policy)(nil)
	_ hook.ResourceReadHook = (*Policy)(nil)
	_ hook.PromptGetHook    = (*Policy)(nil)
	_ sdk.Configurer        = (*Policy)(nil)
)

// New returns an unconfigured policy hook; nil logger discards logs.
func New(logger hclog.Logger) *Policy {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	return &Policy{logger: logger}
}

// Events lists the events the policy decides; it never sees PostToolUse.
func (*Policy) Events() []hook.Event {
	return []hook.Event{hook.EventPreToolUse, hook.EventPermissionRequest, hook.EventPreResourceRead, hook.EventPrePromptGet}
}

// ConfigSchema describes the config block (see the package README).
func (*Policy) ConfigSchema() sdk.ConfigSchema { return schema() }

// Configure checks and installs the rules. On any error diagnostic the
// previous rules stay in force.
func (p *Policy) Configure(_ context.Context, config json.RawMessage) []sdk.Diagnostic {
	var diags configdiag.Set
	if set := compile(config, &diags); set != nil {
		p.rules.Store(set)
		p.logger.Info("policy configured", "rules", len(set.rules), "default", set.fallback.decision)
	}
	return diags.List()
}

// PermissionRequest applies the first matching rule: allow approves, deny
// refuses with the rule's message, ask leaves the call to the reviewer.
func (p *Policy) PermissionRequest(_ context.Context, req hook.Request) (hook.PermissionResult, error) {
	set := p.rules.Load()
	if set == nil {
		return hook.PermissionResult{}, sdk.ErrNotConfigured
	}
	v := set.decide(eventPermission, req)
	p.logDecision("permission_request", req, v)
	switch v.decision {
	case DecisionAllow:
		msg := v.message
		if msg == "" {
			msg = "allowed by the toolgate policy (" + v.source + ")"
		}
		return hook.Allow(msg), nil
	case DecisionDeny:
		return hook.Deny(v.denyMessage(req)), nil
	}
	return hook.NoDecision(), nil
}

// PreToolUse blocks the call when the first matching rule denies it, and
// lets it continue otherwise (allow cannot approve at this stage).
func (p *Policy) PreToolUse(_ context.Context, req hook.Request) (hook.PreToolUseResult, error) {
	set := p.rules.Load()
	if set == nil {
		return hook.PreToolUseResult{}, sdk.ErrNotConfigured
	}
	v := set.decide(eventPreToolUse, req)
	p.logDecision("pre_tool_use", req, v)
	if v.decision == DecisionDeny {
		return hook.Block(v.denyMessage(req)), nil
	}
	return hook.Continue(), nil
}

// logDecision logs who decided; never the arguments, which may hold secrets.
func (p *Policy) logDecision(event string, req hook.Request, v verdict) {
	p.logger.Debug("policy decision", "event", event, "server", req.Server, "tool", req.Tool,
		"call_id", req.CallID, "decision", v.decision, "by", v.source)
}

// Name and Version identify the plugin in Info (toolgate plugins shows
// them). The version changes when the plugin's behaviour or config does.
const (
	Name    = "toolgate-hook-policy"
	Version = "0.2.0"
)

// Identity names the plugin in Info.
func (*Policy) Identity() sdk.Identity { return sdk.Identity{Name: Name, Version: Version} }
