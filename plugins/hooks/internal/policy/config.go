package policy

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/internal/glob"
	"github.com/toolgate/toolgate/plugins/internal/configdiag"
	"github.com/toolgate/toolgate/plugins/internal/hostlist"
	"github.com/toolgate/toolgate/sdk/hook"
)

// The JSON the host sends, shaped by schema(). Pointers tell an absent
// (null) attribute from an empty one.
type configJSON struct {
	Default        *string                `json:"default"`
	DefaultMessage *string                `json:"default_message"`
	Rule           []ruleJSON             `json:"rule"`
	Resource       map[string]requestJSON `json:"resource"`
	Prompt         map[string]requestJSON `json:"prompt"`
}

type ruleJSON struct {
	Name        *string          `json:"name"`
	Server      *string          `json:"server"`
	Tool        *string          `json:"tool"`
	Decision    *string          `json:"decision"`
	Message     *string          `json:"message"`
	Events      []string         `json:"events"`
	Annotations *annotationsJSON `json:"annotations"`
	Caller      *callerJSON      `json:"caller"`
	Argument    []argumentJSON   `json:"argument"`
}

type callerJSON struct {
	Subject  []string `json:"subject"`
	Groups   []string `json:"groups"`
	Email    []string `json:"email"`
	ClientID []string `json:"client_id"`
}

type annotationsJSON struct {
	Destructive *bool `json:"destructive"`
	ReadOnly    *bool `json:"read_only"`
	OpenWorld   *bool `json:"open_world"`
	Idempotent  *bool `json:"idempotent"`
}

type argumentJSON struct {
	Name       *string   `json:"name"`
	OutsideDir *string   `json:"outside_dir"`
	HostNotIn  *[]string `json:"host_not_in"`
	Regex      *string   `json:"regex"`
}

// compile checks a decoded configuration and builds the rule set, recording
// every problem on diags (it goes on after an error so that the user sees
// them all at once).
func compile(raw json.RawMessage, diags *configdiag.Set) *ruleSet {
	var cfg configJSON
	if !configdiag.Decode(diags, raw, &cfg) {
		return nil
	}
	set := &ruleSet{fallback: verdict{decision: DecisionAsk, source: "the default decision"}}
	if cfg.Default != nil && *cfg.Default != "" {
		if d, ok := parseDecision(*cfg.Default); ok {
			set.fallback.decision = d
		} else {
			diags.Error(configdiag.Path("default"), "Unknown decision",
				fmt.Sprintf(`default must be "allow", "deny" or "ask", not %q.`, *cfg.Default))
		}
	}
	set.fallback.message = deref(cfg.DefaultMessage)
	for i, rj := range cfg.Rule {
		if r := compileRule(i, rj, diags); r != nil {
			set.rules = append(set.rules, *r)
		}
	}
	set.resources, _ = compileRequestRules("resource", cfg.Resource, diags)
	set.prompts, _ = compileRequestRules("prompt", cfg.Prompt, diags)
	if diags.HasErrors() {
		return nil
	}
	return set
}

func compileRule(index int, rj ruleJSON, diags *configdiag.Set) *rule {
	at := func(parts ...any) []string { return configdiag.Path(append([]any{"rule", index}, parts...)...) }
	r := &rule{index: index, name: deref(rj.Name), events: eventAll}
	r.verdict.source = r.label()
	ok := true

	switch d, known := parseDecision(deref(rj.Decision)); {
	case rj.Decision == nil || *rj.Decision == "":
		diags.Error(at("decision"), "Missing decision", `Every rule needs decision = "allow", "deny" or "ask".`)
		ok = false
	case !known:
		diags.Error(at("decision"), "Unknown decision",
			fmt.Sprintf(`decision must be "allow", "deny" or "ask", not %q.`, *rj.Decision))
		ok = false
	default:
		r.verdict.decision = d
	}
	r.verdict.message = deref(rj.Message)

	if rj.Events != nil {
		r.events = 0
		for _, e := range rj.Events {
			switch hook.Event(e) {
			case hook.EventPermissionRequest:
				r.events |= eventPermission
			case hook.EventPreToolUse:
				r.events |= eventPreToolUse
			case hook.EventPreResourceRead:
				r.events |= eventResourceRead
			case hook.EventPrePromptGet:
				r.events |= eventPromptGet
			default:
				diags.Error(at("events"), "Unknown event",
					fmt.Sprintf(`events may list "permission_request", "pre_tool_use", "pre_resource_read" and "pre_prompt_get", not %q.`, e))
				ok = false
			}
		}
		if len(rj.Events) == 0 {
			diags.Error(at("events"), "Empty event list",
				`An empty events list makes the rule apply to nothing; remove the attribute to apply the rule to every event.`)
			ok = false
		}
	}

	for _, g := range []struct {
		attr string
		text *string
		dst  **glob.Pattern
	}{{"server", rj.Server, &r.server}, {"tool", rj.Tool, &r.tool}} {
		if g.text == nil || *g.text == "" {
			continue
		}
		p, err := glob.Compile(*g.text)
		if err != nil {
			diags.Error(at(g.attr), "Invalid glob",
				fmt.Sprintf("%s = %q is not a valid glob: %v. Syntax: %s.", g.attr, *g.text, err, glob.Syntax))
			ok = false
			continue
		}
		*g.dst = &p
	}

	if a := rj.Annotations; a != nil {
		r.annotations = annotationMatch{destructive: a.Destructive, readOnly: a.ReadOnly, openWorld: a.OpenWorld, idempotent: a.Idempotent}
		if r.annotations.empty() {
			diags.Error(at("annotations"), "Empty annotations block",
				"Set at least one of destructive, read_only, open_world, idempotent, or remove the block.")
			ok = false
		}
	}

	if c := rj.Caller; c != nil {
		m, cok := compileCaller(c, diags, func(parts ...any) []string { return at(append([]any{"caller"}, parts...)...) })
		r.caller, ok = m, ok && cok
	}

	for j, aj := range rj.Argument {
		if m := compileArgument(aj, diags, func(parts ...any) []string { return at(append([]any{"argument", j}, parts...)...) }); m != nil {
			r.arguments = append(r.arguments, *m)
		} else {
			ok = false
		}
	}

	if ok && r.server == nil && r.tool == nil && rj.Annotations == nil && rj.Caller == nil && len(rj.Argument) == 0 &&
		(rj.Server == nil || *rj.Server == "") && (rj.Tool == nil || *rj.Tool == "") {
		diags.Error(at(), "Rule has no condition",
			`A rule needs at least one of server, tool, annotations, caller or argument. To decide every call that no rule matches, set the top-level default instead.`)
		ok = false
	}
	if !ok {
		return nil
	}
	return r
}

// compileCaller compiles a caller block: each attribute is a list of
// globs, of which one must match.
func compileCaller(c *callerJSON, diags *configdiag.Set, at func(...any) []string) (*callerMatch, bool) {
	m := &callerMatch{}
	ok := true
	for _, f := range []struct {
		attr string
		list []string
		dst  *[]glob.Pattern
	}{{"subject", c.Subject, &m.subject}, {"groups", c.Groups, &m.groups}, {"email", c.Email, &m.email}, {"client_id", c.ClientID, &m.clientID}} {
		if f.list == nil {
			continue
		}
		if len(f.list) == 0 {
			diags.Error(at(f.attr), "Empty list",
				fmt.Sprintf("caller's %s = [] matches no caller; list at least one glob, or remove it.", f.attr))
			ok = false
			continue
		}
		*f.dst = []glob.Pattern{}
		for _, text := range f.list {
			p, err := glob.Compile(text)
			if err != nil {
				diags.Error(at(f.attr), "Invalid glob",
					fmt.Sprintf("%s = %q is not a valid glob: %v. Syntax: %s.", f.attr, text, err, glob.Syntax))
				ok = false
				continue
			}
			*f.dst = append(*f.dst, p)
		}
	}
	if m.subject == nil && m.groups == nil && m.email == nil && m.clientID == nil && ok {
		diags.Error(at(), "Empty caller block", "Set at least one of subject, groups, email, client_id, or remove the block.")
		ok = false
	}
	return m, ok
}

func compileArgument(aj argumentJSON, diags *configdiag.Set, at func(...any) []string) *argumentMatch {
	name := deref(aj.Name)
	if strings.TrimSpace(name) == "" {
		diags.Error(at("name"), "Missing argument name",
			`Set name to the argument to test (a top-level key of the arguments), or "*" for every string value.`)
		return nil
	}
	m := &argumentMatch{name: name}
	tests := 0
	ok := true
	if aj.OutsideDir != nil {
		tests++
		m.kind = testOutsideDir
		m.outsideDir = *aj.OutsideDir
		if strings.TrimSpace(m.outsideDir) == "" {
			diags.Error(at("outside_dir"), "Empty directory",
				`outside_dir needs a directory: absolute, or relative to the call's cwd ("." is the cwd itself).`)
			ok = false
		}
	}
	if aj.HostNotIn != nil {
		tests++
		m.kind = testHostNotIn
		hosts, err := hostlist.Parse(*aj.HostNotIn)
		if err != nil {
			diags.Error(at("host_not_in"), "Invalid host", "host_not_in "+err.Error()+".")
			ok = false
		}
		m.hosts = hosts
	}
	if aj.Regex != nil {
		tests++
		m.kind = testRegex
		re, err := regexp.Compile(*aj.Regex)
		if err != nil {
			diags.Error(at("regex"), "Invalid regular expression",
				fmt.Sprintf("regex = %q does not compile: %v. The syntax is RE2 (https://github.com/google/re2/wiki/Syntax).", *aj.Regex, unwrapRegexpError(err)))
			ok = false
		}
		m.re = re
	}
	if tests != 1 {
		diags.Error(at(), "Argument block needs exactly one test",
			fmt.Sprintf("This argument block sets %d of outside_dir, host_not_in and regex; set exactly one. For several tests on the same argument, write several argument blocks.", tests))
		return nil
	}
	if !ok {
		return nil
	}
	return m
}

// unwrapRegexpError drops regexp's "error parsing regexp: " prefix, which the
// diagnostic says in its own words.
func unwrapRegexpError(err error) string {
	return strings.TrimPrefix(err.Error(), "error parsing regexp: ")
}

func parseDecision(s string) (string, bool) {
	switch s {
	case DecisionAllow, DecisionDeny, DecisionAsk:
		return s, true
	}
	return "", false
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// label names the rule in messages: its name, else its position (1-based,
// as people count; the attribute paths of diagnostics are 0-based like HCL's).
func (r *rule) label() string {
	if r.name != "" {
		return "rule " + strconv.Quote(r.name)
	}
	return "rule " + strconv.Itoa(r.index+1)
}

// eventSet says which events a rule applies to. A rule applies to the
// request events (resource reads, prompt gets) only when it is about
// callers only (see ruleSet.decideRequest).
type eventSet uint8

const (
	eventPermission eventSet = 1 << iota
	eventPreToolUse
	eventResourceRead
	eventPromptGet
	eventAll = eventPermission | eventPreToolUse | eventResourceRead | eventPromptGet
)

func (s eventSet) has(e eventSet) bool { return s&e != 0 }
