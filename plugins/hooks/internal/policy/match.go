package policy

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"

	"github.com/toolgate/toolgate/internal/glob"
	"github.com/toolgate/toolgate/plugins/internal/hostlist"
	"github.com/toolgate/toolgate/plugins/internal/pathscope"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/hook"
)

// ruleSet is one accepted configuration; it is immutable.
type ruleSet struct {
	rules    []rule
	fallback verdict
	// resources and prompts are the resource "glob" {} and prompt "glob"
	// {} blocks, sorted by glob.
	resources, prompts []requestRule
}

type rule struct {
	index       int
	name        string
	events      eventSet
	server      *glob.Pattern // nil: any server
	tool        *glob.Pattern // nil: any tool
	annotations annotationMatch
	caller      *callerMatch // nil: any caller
	arguments   []argumentMatch
	verdict     verdict
}

// verdict is what a rule (or the default) decides, and who decided.
type verdict struct {
	decision string
	message  string
	source   string // "rule 2", `rule "no-rm"`, "the default decision"
}

type annotationMatch struct {
	destructive, readOnly, openWorld, idempotent *bool
}

func (a annotationMatch) empty() bool {
	return a.destructive == nil && a.readOnly == nil && a.openWorld == nil && a.idempotent == nil
}

type argumentTest int

const (
	testOutsideDir argumentTest = iota + 1
	testHostNotIn
	testRegex
)

type argumentMatch struct {
	name       string // a top-level key, or "*"
	kind       argumentTest
	outsideDir string
	hosts      hostlist.List
	re         *regexp.Regexp
}

// decide returns the verdict of the first rule that applies to event and
// matches req, or the default.
func (s *ruleSet) decide(event eventSet, req hook.Request) verdict {
	var args *arguments
	for i := range s.rules {
		r := &s.rules[i]
		if !r.events.has(event) || !r.matchesTool(req) {
			continue
		}
		if len(r.arguments) > 0 && args == nil {
			args = parseArguments(req.Arguments)
		}
		if r.matchesArguments(args, req.Cwd) {
			return r.verdict
		}
	}
	return s.fallback
}

func (r *rule) matchesTool(req hook.Request) bool {
	if r.server != nil && !r.server.Match(req.Server) {
		return false
	}
	if r.tool != nil && !r.tool.Match(req.Tool) {
		return false
	}
	if r.caller != nil && !r.caller.matches(req.Caller) {
		return false
	}
	return r.annotations.matches(req.Annotations)
}

// callerMatch tests who made a call; a nil list is not tested.
type callerMatch struct {
	subject, groups, email, clientID []glob.Pattern
}

// matches reports whether every list set matches the caller. An unknown
// caller (no auth on the gateway) matches nothing: a rule about callers
// cannot tell who that is.
func (m *callerMatch) matches(c *sdk.Caller) bool {
	if c == nil {
		return false
	}
	return anyGlob(m.subject, c.Subject) && anyGlob(m.email, c.Email) && anyGlob(m.clientID, c.ClientID) &&
		(m.groups == nil || anyGroup(m.groups, c.Groups))
}

func anyGlob(ps []glob.Pattern, s string) bool {
	if ps == nil {
		return true
	}
	for _, p := range ps {
		if p.Match(s) {
			return true
		}
	}
	return false
}

func anyGroup(ps []glob.Pattern, groups []string) bool {
	for _, g := range groups {
		for _, p := range ps {
			if p.Match(g) {
				return true
			}
		}
	}
	return false
}

// matches compares the effective hints: MCP's defaults fill in what the
// server left out, so that "destructive = true" also catches a tool that
// never said it was harmless.
func (a annotationMatch) matches(ann *sdk.Annotations) bool {
	if a.empty() {
		return true
	}
	var readOnly, idempotent bool
	destructive, openWorld := true, true
	if ann != nil {
		readOnly, idempotent = ann.ReadOnly, ann.Idempotent
		switch {
		case ann.Destructive != nil:
			destructive = *ann.Destructive
		case ann.ReadOnly:
			destructive = false // a read-only tool changes nothing to destroy
		}
		if ann.OpenWorld != nil {
			openWorld = *ann.OpenWorld
		}
	}
	for _, c := range []struct {
		want *bool
		got  bool
	}{{a.destructive, destructive}, {a.readOnly, readOnly}, {a.openWorld, openWorld}, {a.idempotent, idempotent}} {
		if c.want != nil && *c.want != c.got {
			return false
		}
	}
	return true
}

func (r *rule) matchesArguments(args *arguments, cwd string) bool {
	for i := range r.arguments {
		if !r.arguments[i].matches(args, cwd) {
			return false
		}
	}
	return true
}

// matches reports whether the test holds for any string value of the named
// argument (for an array of paths, one path outside the directory is
// enough). A missing argument never matches.
func (m *argumentMatch) matches(args *arguments, cwd string) bool {
	values := args.strings(m.name)
	for _, v := range values {
		switch m.kind {
		case testRegex:
			if m.re.MatchString(v) {
				return true
			}
		case testHostNotIn:
			host, ok := hostlist.HostOf(v)
			if !ok || !m.hosts.Contains(host) {
				return true // no recognisable host is not a listed host
			}
		case testOutsideDir:
			if outside(v, m.outsideDir, cwd) {
				return true
			}
		}
	}
	return false
}

// outside reports whether path resolves outside dir. Anything that cannot
// be resolved (a relative path or directory with no cwd, a symlink loop, a
// permission error) counts as outside: the test exists to catch escapes, so
// it fails closed.
func outside(path, dir, cwd string) bool {
	home, _ := os.UserHomeDir()
	resolvedDir, err := pathscope.Resolve(dir, cwd, home)
	if err != nil {
		return true
	}
	resolved, err := pathscope.Resolve(path, cwd, home)
	if err != nil {
		return true
	}
	return !pathscope.Within(resolved, resolvedDir)
}

// arguments is a call's argument object, parsed once per decision.
type arguments struct {
	object map[string]any // nil when the arguments are not a JSON object
}

func parseArguments(raw json.RawMessage) *arguments {
	a := &arguments{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	_ = dec.Decode(&a.object) // not an object: no argument matches
	return a
}

// strings returns the string leaves of the named argument ("*": of all
// arguments). Numbers and booleans are included in their JSON spelling, so a
// regex can test them too.
func (a *arguments) strings(name string) []string {
	if a == nil || a.object == nil {
		return nil
	}
	var out []string
	if name == "*" {
		collectStrings(a.object, &out)
		return out
	}
	v, ok := a.object[name]
	if !ok {
		return nil
	}
	collectStrings(v, &out)
	return out
}

func collectStrings(v any, out *[]string) {
	switch x := v.(type) {
	case string:
		*out = append(*out, x)
	case json.Number:
		*out = append(*out, x.String())
	case bool:
		if x {
			*out = append(*out, "true")
		} else {
			*out = append(*out, "false")
		}
	case []any:
		for _, e := range x {
			collectStrings(e, out)
		}
	case map[string]any:
		for _, e := range x {
			collectStrings(e, out)
		}
	}
}

// denyMessage is the text the model gets for a denial.
func (v verdict) denyMessage(req hook.Request) string {
	if strings.TrimSpace(v.message) != "" {
		return v.message
	}
	return "The toolgate policy (" + v.source + ") does not allow calling " + req.Tool + " on server " + req.Server +
		". Do not retry this call; ask the user to run it or to change the policy."
}
