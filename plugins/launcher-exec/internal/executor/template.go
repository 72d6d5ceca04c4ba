package executor

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Placeholders of the custom executor's prefix template.
const (
	phCommand = "{{command}}"
	phArgs    = "{{args}}"
	phEnv     = "{{env}}"
	phDir     = "{{dir}}"
	phScript  = "{{script}}"
)

var placeholderPattern = regexp.MustCompile(`\{\{[^{}]*\}\}`)

type templateError struct {
	path []string // below prefix
	msg  string
}

// templateUses says which placeholders a template contains.
type templateUses struct {
	command, args, env, dir, script bool
}

func usesOf(prefix []string) templateUses {
	var u templateUses
	for _, el := range prefix {
		u.command = u.command || strings.Contains(el, phCommand)
		u.args = u.args || strings.Contains(el, phArgs)
		u.env = u.env || strings.Contains(el, phEnv)
		u.dir = u.dir || strings.Contains(el, phDir)
		u.script = u.script || strings.Contains(el, phScript)
	}
	return u
}

// checkTemplate validates a custom prefix: known placeholders only,
// {{args}} as a whole element, {{command}} and {{args}} together, and
// {{script}} alone (it carries the command, args, env and dir itself).
func checkTemplate(prefix []string) *templateError {
	known := []string{phCommand, phArgs, phEnv, phDir, phScript}
	for i, el := range prefix {
		at := []string{fmt.Sprint(i)}
		for _, ph := range placeholderPattern.FindAllString(el, -1) {
			if !slices.Contains(known, ph) {
				return &templateError{at, fmt.Sprintf("%s is not a placeholder; use %s.", ph, strings.Join(known, ", "))}
			}
		}
		if strings.Contains(el, phArgs) && el != phArgs {
			return &templateError{at, "{{args}} stands for zero or more arguments, so it must be a whole element: \"{{args}}\"."}
		}
		if strings.Contains(el, phEnv) && len(placeholderPattern.FindAllString(el, -1)) > 1 {
			return &templateError{at, "an element with {{env}} is repeated once per variable, so it cannot hold another placeholder."}
		}
	}
	u := usesOf(prefix)
	switch {
	case u.script && (u.command || u.args || u.env || u.dir):
		return &templateError{nil, "{{script}} carries the command, its arguments, env and cwd itself; remove {{command}}, {{args}}, {{env}} and {{dir}}, or drop {{script}}."}
	case u.command != u.args:
		return &templateError{nil, "use {{command}} and {{args}} together (the arguments go where {{args}} stands), or neither (the command and its arguments are appended)."}
	}
	return nil
}

// expandTemplate builds the custom executor's argv. env entries replace
// {{env}} (the element is repeated per entry); an element with {{dir}} is
// dropped when dir is empty; script replaces {{script}}.
func expandTemplate(prefix []string, command string, args []string, env []envEntry, dir, script string) []string {
	u := usesOf(prefix)
	out := make([]string, 0, len(prefix)+len(args)+len(env)+1)
	for _, el := range prefix {
		switch {
		case el == phArgs:
			out = append(out, args...)
		case strings.Contains(el, phEnv):
			for _, e := range env {
				out = append(out, strings.ReplaceAll(el, phEnv, e.name+"="+e.value))
			}
		case strings.Contains(el, phDir) && dir == "":
		default:
			el = strings.ReplaceAll(el, phCommand, command)
			el = strings.ReplaceAll(el, phDir, dir)
			el = strings.ReplaceAll(el, phScript, script)
			out = append(out, el)
		}
	}
	if !u.command && !u.script {
		out = append(out, command)
		out = append(out, args...)
	}
	return out
}
