package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/hcl/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zclconf/go-cty/cty"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/ledger"
	"github.com/toolgate/toolgate/host/pluginhost"
)

// Decision classes, ordered from tightest to loosest.
const (
	Deny   = "deny"
	Ask    = "ask"    // a human would be asked
	Review = "review" // an LLM reviewer would decide, and it was not run
	Allow  = "allow"
)

func rank(class string) int {
	switch class {
	case Deny:
		return 0
	case Ask, Review:
		return 1
	case Allow:
		return 2
	}
	return -1
}

// Loosens reports whether going from before to after lets more through:
// deny→allow, deny→ask, ask→allow.
func Loosens(before, after string) bool { return rank(after) > rank(before) }

// Options configure a Replayer.
type Options struct {
	Logger    hclog.Logger
	LookupEnv func(string) (string, bool)
	Cwd       string
	// LLMReviewer lets a Guardian whose engine is not "rules" review
	// calls (it talks to a model). Without it such calls are reported as
	// Review.
	LLMReviewer bool
}

// Replayer holds the candidate's approval chain.
type Replayer struct {
	proc    *approval.Procedure
	plugins *pluginhost.Plugins
}

// New builds the approval chain of cfg. Plugins start on first use.
func New(cfg *config.Config, opts Options) *Replayer {
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	plugins := pluginhost.New(cfg, pluginhost.Options{Logger: log, LookupEnv: opts.LookupEnv, Cwd: opts.Cwd})
	var pre []approval.PreToolUseHook
	for _, a := range plugins.HookAdapters() {
		pre = append(pre, a)
	}
	var reviewer approval.Reviewer
	if r := plugins.Reviewer(); r != nil {
		reviewer = r
		if !opts.LLMReviewer && !rulesEngine(cfg) {
			reviewer = skippedReviewer{r.Name()}
		}
	}
	proc := approval.New(approval.Options{
		Approval:             cfg.Approval,
		Server:               cfg.Server,
		Hooks:                plugins.Hooks(),
		PreToolUse:           pre,
		Reviewer:             reviewer,
		Asker:                asker{},
		NoPersistentApproval: true, // nothing is written to the candidate's config
		Logger:               log,
	})
	return &Replayer{proc: proc, plugins: plugins}
}

// Close stops the plugin processes.
func (r *Replayer) Close() error { return r.plugins.Close() }

// rulesEngine reports whether the Guardian block cfg uses has engine =
// "rules" (the deterministic engine that needs no network).
func rulesEngine(cfg *config.Config) bool {
	for _, p := range cfg.Plugins {
		if p.Kind != config.KindGuardian || (cfg.Approval.Guardian != "" && p.Name != cfg.Approval.Guardian) || p.Config == nil {
			continue
		}
		content, _, _ := p.Config.PartialContent(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "engine"}}})
		if a, ok := content.Attributes["engine"]; ok {
			v, diags := a.Expr.Value(nil)
			if !diags.HasErrors() && v.Type() == cty.String && v.AsString() == "rules" {
				return true
			}
		}
	}
	return false
}

// marks are set by the asker and the skipped reviewer for one call.
type marks struct{ asked, reviewSkipped bool }

type marksKey struct{}

func markOf(ctx context.Context) *marks {
	m, _ := ctx.Value(marksKey{}).(*marks)
	if m == nil {
		m = &marks{}
	}
	return m
}

// asker stands in for the human: it notes that the call got this far
// and declines.
type asker struct{}

func (asker) AskApproval(ctx context.Context, _ approval.Prompt) (approval.Choice, error) {
	markOf(ctx).asked = true
	return approval.ChoiceDecline, nil
}

func (asker) Elicit(context.Context, approval.Elicitation) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "decline"}, nil
}

// skippedReviewer stands in for an LLM Guardian.
type skippedReviewer struct{ name string }

func (s skippedReviewer) Name() string { return s.name }

func (skippedReviewer) Review(ctx context.Context, _ approval.Request) (approval.Assessment, error) {
	markOf(ctx).reviewSkipped = true
	return approval.Assessment{}, errors.New("the LLM reviewer is not run in replay (pass --llm-reviewer)")
}

// Outcome is a decision as replay compares it.
type Outcome struct {
	Class string                `json:"decision"` // allow | deny | ask | review
	Step  approval.DecisionStep `json:"step"`
	By    string                `json:"by"`
	Text  string                `json:"text,omitempty"` // a denial's text
}

// Cause is how an outcome is grouped: the step and who decided, with a
// denial's text (which names the rule of a policy hook).
func (o Outcome) Cause() string {
	s := string(o.Step)
	if o.By != "" {
		s += " " + o.By
	}
	if o.Class == Ask {
		s = "nothing decides: a human would be asked"
	}
	if o.Class == Review {
		s = "the LLM reviewer " + o.By + " (not run)"
	}
	if o.Text != "" && o.Class == Deny {
		t := o.Text
		if len(t) > 120 {
			t = t[:120] + "…"
		}
		s += ": " + t
	}
	return s
}

// Call is one recorded call and what the candidate decides.
type Call struct {
	Seq      uint64  `json:"seq"` // the seq of its recorded decision
	CallID   string  `json:"call_id"`
	Server   string  `json:"server"`
	Tool     string  `json:"tool"`
	Caller   string  `json:"caller"`
	File     string  `json:"file"`
	Line     int     `json:"line"`
	Before   Outcome `json:"before"`
	After    Outcome `json:"after"`
	Loosened bool    `json:"loosened"`
}

// Result is a replay's report.
type Result struct {
	Replayed  int    `json:"replayed"`
	Unchanged int    `json:"unchanged"`
	Changed   []Call `json:"changed"`
	Loosened  int    `json:"loosened"`
	Tightened int    `json:"tightened"`
	// Skipped counts calls not replayed, by reason.
	Skipped map[string]int `json:"skipped,omitempty"`
}

// Group is the changed calls with the same transition and cause.
type Group struct {
	Before, After, Cause string
	Calls                []Call
}

// Groups returns the changes grouped by transition and cause, loosening
// first.
func (r *Result) Groups() []Group {
	idx := map[[3]string]int{}
	var gs []Group
	for _, c := range r.Changed {
		cause := c.After.Cause()
		if c.After.Class == Ask || c.After.Class == Review {
			cause = c.After.Cause() + "; was " + c.Before.Cause()
		}
		k := [3]string{c.Before.Class, c.After.Class, cause}
		i, ok := idx[k]
		if !ok {
			i = len(gs)
			idx[k] = i
			gs = append(gs, Group{Before: k[0], After: k[1], Cause: k[2]})
		}
		gs[i].Calls = append(gs[i].Calls, c)
	}
	sort.SliceStable(gs, func(i, j int) bool {
		li, lj := Loosens(gs[i].Before, gs[i].After), Loosens(gs[j].Before, gs[j].After)
		if li != lj {
			return li
		}
		return gs[i].Cause < gs[j].Cause
	})
	return gs
}

// pending is a call that began and has not been decided yet.
type pending struct {
	req approval.Request
}

// Steps whose denials are not the approval chain's: admission, the
// audit gate, and the hooks of resource reads and prompt gets (which are
// not tool calls). Calls they refused are not replayed.
var notReplayed = map[approval.DecisionStep]string{
	approval.StepAudit:           "refused because the audit log could not be written",
	approval.StepRateLimit:       "refused by a rate limit before approval",
	approval.StepPreResourceRead: "a resource read a hook decided (not a tool call)",
	approval.StepPrePromptGet:    "a prompt get a hook decided (not a tool call)",
}

// Run replays the calls recorded in files, in order. It reads the ledger
// as a stream; only calls that began and were not decided yet are held.
func (r *Replayer) Run(ctx context.Context, files []string) (*Result, error) {
	res := &Result{Skipped: map[string]int{}}
	open := map[string]*pending{}
	err := ledger.Scan(files, func(e *ledger.Entry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		switch e.Event {
		case "tool_call_begin":
			if e.CallID == "" {
				return nil
			}
			req := approval.Request{CallID: e.CallID, SessionID: e.SessionID, Server: e.Server, Tool: e.Tool,
				ModelName: e.ModelName, Arguments: append(json.RawMessage(nil), e.Arguments...)}
			if len(e.Arguments) == 0 {
				req.Arguments = nil
			}
			req.Caller = e.Caller
			if len(e.Annotations) > 0 {
				var a mcp.ToolAnnotations
				if json.Unmarshal(e.Annotations, &a) == nil {
					req.Annotations = &a
				}
			}
			open[e.CallID] = &pending{req: req}
		case "tool_call_end":
			delete(open, e.CallID)
		case "approval_decision":
			p, ok := open[e.CallID]
			if !ok || e.Verdict == "abstain" {
				return nil
			}
			delete(open, e.CallID)
			if why, skip := notReplayed[approval.DecisionStep(e.Step)]; skip {
				res.Skipped[why]++
				return nil
			}
			if p.req.Arguments == nil {
				res.Skipped["no arguments recorded"]++
				return nil
			}
			before := recorded(e)
			after := r.decide(ctx, p.req)
			res.Replayed++
			if before.Class == after.Class {
				res.Unchanged++
				return nil
			}
			c := Call{Seq: e.Seq, CallID: e.CallID, Server: e.Server, Tool: e.Tool, Caller: ledger.CallerName(e.Caller),
				File: e.File, Line: e.Line, Before: before, After: after, Loosened: Loosens(before.Class, after.Class)}
			if c.Loosened {
				res.Loosened++
			} else {
				res.Tightened++
			}
			res.Changed = append(res.Changed, c)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(res.Skipped) == 0 {
		res.Skipped = nil
	}
	return res, nil
}

// decide runs the candidate's PreToolUse hooks and procedure on one call.
func (r *Replayer) decide(ctx context.Context, req approval.Request) Outcome {
	m := &marks{}
	ctx = context.WithValue(ctx, marksKey{}, m)
	req, blocked := r.proc.PreToolUse(ctx, req, nil)
	if blocked != nil {
		return Outcome{Class: Deny, Step: blocked.Step, By: blocked.By, Text: blocked.Text}
	}
	d := r.proc.Decide(ctx, req)
	switch {
	case m.asked:
		return Outcome{Class: Ask, Step: approval.StepUser, By: "user"}
	case m.reviewSkipped:
		return Outcome{Class: Review, Step: approval.StepReviewer, By: d.By}
	case d.Approved:
		return Outcome{Class: Allow, Step: d.Step, By: d.By}
	}
	return Outcome{Class: Deny, Step: d.Step, By: d.By, Text: d.Text}
}

// recorded classifies a recorded decision like decide does: a human's
// answer (or the lack of one) is "ask", as is an approval remembered
// for the session, which a human gave.
func recorded(e *ledger.Entry) Outcome {
	o := Outcome{Step: approval.DecisionStep(e.Step), By: e.By}
	approved := e.Verdict == "approved"
	switch {
	case o.Step == approval.StepSession:
		o.Class = Ask
	case o.Step == approval.StepUser && e.By == "user":
		o.Class = Ask
	case o.Step == approval.StepUser && !approved && e.Rationale != approval.TextPolicyNever:
		o.Class = Ask // it reached the human step and nobody could answer
	case approved:
		o.Class = Allow
	default:
		o.Class, o.Text = Deny, e.Rationale
	}
	return o
}

// Summary is one line saying what the replay found.
func (r *Result) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "replayed %d call(s): %d unchanged, %d changed (%d loosened, %d tightened)",
		r.Replayed, r.Unchanged, len(r.Changed), r.Loosened, r.Tightened)
	keys := make([]string, 0, len(r.Skipped))
	for k := range r.Skipped {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "; %d not replayed: %s", r.Skipped[k], k)
	}
	return b.String()
}
