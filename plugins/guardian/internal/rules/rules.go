package rules

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/plugins/internal/hostlist"
	"github.com/toolgate/toolgate/plugins/internal/pathscope"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/guardian"
)

// Trust is how much the user trusts a server.
type Trust int

// Trust levels. The zero value is TrustNormal.
const (
	TrustNormal Trust = iota
	// TrustHigh lowers the risk of the server's calls one level.
	TrustHigh
	// TrustLow raises it one level.
	TrustLow
)

// Config configures the engine. The zero value checks no paths, knows no
// allowed hosts, trusts every server normally, and denies at risk high.
type Config struct {
	// Workspace is the absolute, symlink-resolved directory calls may write
	// in; "" turns the outside-the-workspace check off.
	Workspace string
	// Home is the user's home directory, for "~" and secret locations.
	Home string
	// AllowedHosts lists the network destinations calls may reach; nil
	// means no list (URLs count as medium risk).
	AllowedHosts *hostlist.List
	// Trust maps server names to their trust.
	Trust map[string]Trust
	// Threshold is the lowest risk that is denied; RiskUnspecified means
	// RiskHigh.
	Threshold guardian.RiskLevel
}

// Engine scores calls. Create it with [New].
type Engine struct {
	cfg Config
}

// New returns an engine with cfg.
func New(cfg Config) *Engine {
	if cfg.Threshold == guardian.RiskUnspecified {
		cfg.Threshold = guardian.RiskHigh
	}
	return &Engine{cfg: cfg}
}

// finding is one reason for a risk level.
type finding struct {
	level  guardian.RiskLevel
	reason string
}

// Review scores the action and decides. It never fails.
func (e *Engine) Review(_ context.Context, a guardian.Action) (guardian.Verdict, error) {
	findings := e.assess(a)
	level := guardian.RiskLow
	for _, f := range findings {
		level = max(level, f.level)
	}
	var trustNote string
	switch e.cfg.Trust[a.Server] {
	case TrustHigh:
		if level > guardian.RiskLow {
			level--
			trustNote = fmt.Sprintf(" Server %q is trusted, which lowers the risk one level.", a.Server)
		}
	case TrustLow:
		if level < guardian.RiskCritical {
			level++
		}
		trustNote = fmt.Sprintf(" Server %q has low trust, which raises the risk one level.", a.Server)
	}
	v := guardian.Verdict{Outcome: guardian.OutcomeAllow, RiskLevel: level, UserAuthorization: guardian.AuthorizationUnknown}
	if level >= e.cfg.Threshold {
		v.Outcome = guardian.OutcomeDeny
	}
	v.Rationale = rationale(level, e.cfg.Threshold, findings) + trustNote
	return v, nil
}

// rationale states the level, the threshold and the strongest reasons.
func rationale(level, threshold guardian.RiskLevel, findings []finding) string {
	slices.SortStableFunc(findings, func(a, b finding) int { return cmp.Compare(b.level, a.level) })
	var reasons []string
	for _, f := range findings {
		if f.level < level-1 && len(reasons) > 0 || len(reasons) == 3 {
			break
		}
		if !slices.Contains(reasons, f.reason) {
			reasons = append(reasons, f.reason)
		}
	}
	verb := "below"
	if level >= threshold {
		verb = "at or above"
	}
	return fmt.Sprintf("Risk %s, %s the deny threshold (%s): %s.", level, verb, threshold, strings.Join(reasons, "; "))
}

// assess collects the findings for a.
func (e *Engine) assess(a guardian.Action) []finding {
	var out []finding
	readOnly := a.Annotations != nil && a.Annotations.ReadOnly && (a.Annotations.Destructive == nil || !*a.Annotations.Destructive)
	out = append(out, annotationFindings(a.Annotations)...)
	if verb, ok := destructiveVerb(a.Tool); ok {
		out = append(out, finding{guardian.RiskHigh, fmt.Sprintf("the tool's name says it destroys data (%q)", verb)})
	}
	var args any
	dec := json.NewDecoder(bytes.NewReader(a.Arguments))
	dec.UseNumber()
	if err := dec.Decode(&args); err == nil {
		walkStrings(args, "", func(key, value string) {
			out = append(out, e.valueFindings(key, value, readOnly)...)
		})
	}
	return out
}

func annotationFindings(ann *sdk.Annotations) []finding {
	if ann == nil {
		return []finding{{guardian.RiskMedium, "the tool declares no annotations, so it may change data and reach the outside world"}}
	}
	if ann.ReadOnly && (ann.Destructive == nil || !*ann.Destructive) {
		return []finding{{guardian.RiskLow, "the tool declares it only reads"}}
	}
	var out []finding
	switch {
	case ann.Destructive != nil && *ann.Destructive:
		out = append(out, finding{guardian.RiskMedium, "the tool declares it may destroy data"})
	case ann.Destructive == nil:
		out = append(out, finding{guardian.RiskMedium, "the tool does not declare that it is non-destructive"})
	}
	if ann.OpenWorld == nil || *ann.OpenWorld {
		out = append(out, finding{guardian.RiskMedium, "the tool may reach the outside world"})
	}
	if len(out) == 0 {
		out = append(out, finding{guardian.RiskLow, "the tool declares it changes only local, non-destructive state"})
	}
	return out
}

// valueFindings checks one string argument value found under key.
func (e *Engine) valueFindings(key, value string, readOnly bool) []finding {
	var out []finding
	label := "an argument"
	if key != "" {
		label = fmt.Sprintf("argument %q", key)
	}
	for _, p := range credentials {
		if p.re.MatchString(value) {
			out = append(out, finding{guardian.RiskCritical, fmt.Sprintf("%s contains what looks like %s", label, p.what)})
			break
		}
	}
	if secretKey(key) && strings.TrimSpace(value) != "" {
		out = append(out, finding{guardian.RiskHigh, fmt.Sprintf("%s carries a credential", label)})
	}
	for _, p := range destructiveCommands {
		if p.re.MatchString(value) {
			out = append(out, finding{guardian.RiskHigh, fmt.Sprintf("%s contains a destructive command (%s)", label, p.what)})
			break
		}
	}
	if host, ok := hostlist.URLHost(value); ok {
		out = append(out, e.hostFinding(label, host))
	} else if hostKey(key) {
		if host, ok := hostlist.HostOf(value); ok {
			out = append(out, e.hostFinding(label, host))
		}
	}
	switch {
	case plausiblePath(key, value):
		out = append(out, e.pathFindings(label, value, readOnly)...)
	case commandKey(key):
		for _, word := range strings.Fields(value) {
			if looksLikePath(word) {
				out = append(out, e.pathFindings(label, strings.Trim(word, `"'`), readOnly)...)
			}
		}
	}
	return out
}

func (e *Engine) hostFinding(label, host string) finding {
	switch {
	case e.cfg.AllowedHosts == nil:
		return finding{guardian.RiskMedium, fmt.Sprintf("%s reaches the network host %s", label, host)}
	case e.cfg.AllowedHosts.Contains(host):
		return finding{guardian.RiskLow, fmt.Sprintf("%s reaches the allowed host %s", label, host)}
	}
	return finding{guardian.RiskHigh, fmt.Sprintf("%s reaches %s, which is not in allowed_hosts", label, host)}
}

// pathFindings checks a path: secret locations are high risk even to read;
// outside the workspace is high for a writing tool, medium for a reading one.
// A path that cannot be resolved counts as outside.
func (e *Engine) pathFindings(label, value string, readOnly bool) []finding {
	resolved, err := pathscope.Resolve(value, e.cfg.Workspace, e.cfg.Home)
	if err != nil {
		if e.cfg.Workspace == "" {
			return nil
		}
		return []finding{{guardian.RiskHigh, fmt.Sprintf("%s is a path that cannot be resolved safely (%v)", label, err)}}
	}
	var out []finding
	if what, ok := sensitivePath(resolved, e.cfg.Home); ok {
		out = append(out, finding{guardian.RiskHigh, fmt.Sprintf("%s points into %s (%s)", label, what, resolved)})
	}
	if e.cfg.Workspace != "" && !pathscope.Within(resolved, e.cfg.Workspace) {
		level, verb := guardian.RiskHigh, "writes"
		if readOnly {
			level, verb = guardian.RiskMedium, "reads"
		}
		out = append(out, finding{level, fmt.Sprintf("%s %s %s, outside the workspace %s", label, verb, resolved, e.cfg.Workspace)})
	}
	return out
}

// walkStrings calls fn for every string leaf of v with the nearest object
// key above it (array elements inherit their array's key).
func walkStrings(v any, key string, fn func(key, value string)) {
	switch x := v.(type) {
	case string:
		fn(key, x)
	case []any:
		for _, e := range x {
			walkStrings(e, key, fn)
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			walkStrings(x[k], k, fn)
		}
	}
}
