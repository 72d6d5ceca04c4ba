package policy

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/internal/glob"
	"github.com/toolgate/toolgate/plugins/internal/configdiag"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/hook"
)

// requestJSON is one resource "glob" {} or prompt "glob" {} block; the
// label is the glob, the key of the decoded map.
type requestJSON struct {
	Server   *string     `json:"server"`
	Decision *string     `json:"decision"`
	Message  *string     `json:"message"`
	Caller   *callerJSON `json:"caller"`
}

// requestRule is a compiled resource or prompt block.
type requestRule struct {
	label   string
	target  glob.Pattern  // over the raw URI or the prompt's raw name
	server  *glob.Pattern // nil: any server
	caller  *callerMatch  // nil: any caller
	verdict verdict
}

// compileRequestRules compiles the blocks of one type ("resource" or
// "prompt"). HCL gives labelled blocks as a map, which keeps no order, so
// they are sorted by label and their outcome does not depend on order
// (see ruleSet.decideRequest).
func compileRequestRules(block string, m map[string]requestJSON, diags *configdiag.Set) ([]requestRule, bool) {
	labels := make([]string, 0, len(m))
	for l := range m {
		labels = append(labels, l)
	}
	slices.Sort(labels)
	ok := true
	var out []requestRule
	for _, label := range labels {
		rj := m[label]
		at := func(parts ...any) []string { return configdiag.Path(append([]any{block, label}, parts...)...) }
		r := requestRule{label: label}
		r.verdict.source = fmt.Sprintf("%s %q", block, label)
		r.verdict.message = deref(rj.Message)
		p, err := glob.Compile(label)
		if err != nil {
			diags.Error(at(), "Invalid glob", fmt.Sprintf("%s %q is not a valid glob: %v. Syntax: %s.", block, label, err, glob.Syntax))
			ok = false
			continue
		}
		r.target = p
		switch d := deref(rj.Decision); d {
		case DecisionAllow, DecisionDeny:
			r.verdict.decision = d
		case "":
			diags.Error(at("decision"), "Missing decision", fmt.Sprintf(`Every %s block needs decision = "allow" or "deny".`, block))
			ok = false
		default:
			diags.Error(at("decision"), "Unknown decision",
				fmt.Sprintf(`A %s block's decision must be "allow" or "deny", not %q: reads and prompt gets are never put to a reviewer.`, block, d))
			ok = false
		}
		if s := deref(rj.Server); s != "" {
			sp, err := glob.Compile(s)
			if err != nil {
				diags.Error(at("server"), "Invalid glob", fmt.Sprintf("server = %q is not a valid glob: %v. Syntax: %s.", s, err, glob.Syntax))
				ok = false
			} else {
				r.server = &sp
			}
		}
		if c := rj.Caller; c != nil {
			m, cok := compileCaller(c, diags, func(parts ...any) []string { return at(append([]any{"caller"}, parts...)...) })
			r.caller, ok = m, ok && cok
		}
		out = append(out, r)
	}
	return out, ok
}

func (r *requestRule) matches(server, target string, c *sdk.Caller) bool {
	return r.target.Match(target) && (r.server == nil || r.server.Match(server)) && (r.caller == nil || r.caller.matches(c))
}

// decideRequest decides a resource read or prompt get. Of the kind's own
// blocks that match, a deny wins over an allow; an allow lets the request
// go on without looking further. Otherwise the rule blocks that are about
// callers only (a caller block and no tool, annotations or argument
// condition) and apply to event are tried in order, the first match
// deciding (allow and ask let the request go on). Nothing matching lets
// it go on: the top-level default is about tool calls.
func (s *ruleSet) decideRequest(event eventSet, own []requestRule, server, target string, c *sdk.Caller) (verdict, bool) {
	var allow *verdict
	for i := range own {
		r := &own[i]
		if !r.matches(server, target, c) {
			continue
		}
		if r.verdict.decision == DecisionDeny {
			return r.verdict, true
		}
		if allow == nil {
			allow = &r.verdict
		}
	}
	if allow != nil {
		return *allow, true
	}
	for i := range s.rules {
		r := &s.rules[i]
		if r.caller == nil || r.tool != nil || !r.annotations.empty() || len(r.arguments) > 0 || !r.events.has(event) {
			continue
		}
		if r.server != nil && !r.server.Match(server) {
			continue
		}
		if r.caller.matches(c) {
			return r.verdict, true
		}
	}
	return verdict{}, false
}

// PreResourceRead blocks a resource read that a resource block or a
// caller rule denies.
func (p *Policy) PreResourceRead(_ context.Context, req hook.ResourceRequest) (hook.PreToolUseResult, error) {
	set := p.rules.Load()
	if set == nil {
		return hook.PreToolUseResult{}, sdk.ErrNotConfigured
	}
	v, matched := set.decideRequest(eventResourceRead, set.resources, req.Server, req.URI, req.Caller)
	p.logger.Debug("policy decision", "event", "pre_resource_read", "server", req.Server, "call_id", req.CallID,
		"decision", v.decision, "by", v.source)
	if matched && v.decision == DecisionDeny {
		return hook.Block(v.requestDenyMessage("reading "+req.URI, req.Server)), nil
	}
	return hook.Continue(), nil
}

// PrePromptGet blocks a prompt get that a prompt block or a caller rule
// denies.
func (p *Policy) PrePromptGet(_ context.Context, req hook.PromptRequest) (hook.PreToolUseResult, error) {
	set := p.rules.Load()
	if set == nil {
		return hook.PreToolUseResult{}, sdk.ErrNotConfigured
	}
	v, matched := set.decideRequest(eventPromptGet, set.prompts, req.Server, req.Prompt, req.Caller)
	p.logger.Debug("policy decision", "event", "pre_prompt_get", "server", req.Server, "call_id", req.CallID,
		"decision", v.decision, "by", v.source)
	if matched && v.decision == DecisionDeny {
		return hook.Block(v.requestDenyMessage("the prompt "+req.Prompt, req.Server)), nil
	}
	return hook.Continue(), nil
}

func (v verdict) requestDenyMessage(what, server string) string {
	if strings.TrimSpace(v.message) != "" {
		return v.message
	}
	return "The toolgate policy (" + v.source + ") does not allow " + what + " on server " + server +
		". Do not retry; ask the user or change the policy."
}
