package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
)

// Options configure a [Procedure]. Zero values are documented per field.
type Options struct {
	// Approval is the top-level approval block. The zero value (empty
	// policy) behaves like on-request with the user as reviewer.
	Approval config.Approval
	// Server looks up a server block for mode resolution. nil, or a
	// server it does not know, means mode auto.
	Server func(name string) (config.Server, bool)
	// Hooks are the PermissionRequest hooks, in config order.
	Hooks []Hook
	// ShadowHooks run beside the enforced chain on ShadowRunner once a
	// call is decided; their answers are recorded, never applied. Both
	// are needed (and Events), else shadow hooks do not run.
	ShadowHooks  []Hook
	ShadowRunner *ShadowRunner
	// PreToolUse hooks run before the procedure for every call, in config
	// order (see [Procedure.PreToolUse]).
	PreToolUse []PreToolUseHook
	// PostToolUse hooks see each executed call's projected result.
	PostToolUse []PostToolUseHook
	// Reviewer is the Guardian; used only when Approval.Reviewer is
	// guardian and the policy is on-request. nil with reviewer = guardian
	// denies, saying how to configure one.
	Reviewer Reviewer
	// Asker answers the user path of requests that carry no Asker of
	// their own (Request.Asker): a program with a single human end, such
	// as a test. The host sets none: each request carries its session's.
	// With neither, nobody can be asked, and calls that reach the user
	// step are denied with a text saying how to configure an approver.
	Asker Asker
	// NoPersistentApproval withholds "Allow and don't ask me again" from
	// the user path: it is not offered, and such an answer counts as
	// Allow. toolgate serve sets it unless the operator enabled serve {
	// allow_persistent_approval }, because there the answer comes from
	// an upstream client and would rewrite the operator's config for
	// every session.
	NoPersistentApproval bool
	// Persist writes "Allow and don't ask me again" for a tool to the
	// config file (usually a closure over config.RememberToolApproval).
	// Calls are serialized. nil means the choice is remembered for the
	// session only.
	// definition is the tool's DefinitionHash, for approved_definition.
	Persist func(server, tool, definition string) error
	// Events receives one events.ApprovalDecision per deciding step, plus
	// abstentions of hooks. nil = no events.
	Events events.Sink
	// AuditWritable, when set, is consulted before the procedure runs
	// and again after it approved: an error denies the call (audit {
	// on_error = "deny" }: nothing runs unrecorded). nil = calls never
	// wait on the audit log.
	AuditWritable func() error
	// Logger; nil = no logging.
	Logger hclog.Logger
}

// Procedure is the ordered approval procedure. It never executes calls
// and never talks to servers: it answers "may this call run?" and
// remembers what the user asked it to remember.
//
// A Procedure is safe for concurrent use.
type Procedure struct {
	// fixed at construction
	approval  config.Approval
	server    func(string) (config.Server, bool)
	hooks     []Hook
	shadow    []Hook
	shadowRun *ShadowRunner
	pre       []PreToolUseHook
	post      []PostToolUseHook
	reviewer  Reviewer
	asker     Asker
	persist   func(server, tool, definition string) error
	// noPersist: see Options.NoPersistentApproval.
	noPersist bool
	events    events.Sink
	audit     func() error
	log       hclog.Logger

	// persistMu serializes Persist: two writes to the same config file
	// at once would lose one of them. Shared with reconfigured copies.
	persistMu *sync.Mutex

	// memory is shared with reconfigured copies: a config reload must not
	// forget what the user allowed for a session.
	memory *memory
	// persisted is not shared: approvals written to the config file are
	// read back from it on a reload, and one deleted from it is revoked.
	persisted *persisted
}

// New returns a Procedure. It does not start anything.
func New(opts Options) *Procedure {
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Procedure{
		approval:  opts.Approval,
		server:    opts.Server,
		hooks:     append([]Hook(nil), opts.Hooks...),
		shadow:    append([]Hook(nil), opts.ShadowHooks...),
		shadowRun: opts.ShadowRunner,
		pre:       append([]PreToolUseHook(nil), opts.PreToolUse...),
		post:      append([]PostToolUseHook(nil), opts.PostToolUse...),
		reviewer:  opts.Reviewer,
		asker:     opts.Asker,
		persist:   opts.Persist,
		noPersist: opts.NoPersistentApproval,
		events:    opts.Events,
		audit:     opts.AuditWritable,
		log:       log.Named("approval"),
		persistMu: &sync.Mutex{},
		memory:    &memory{},
		persisted: &persisted{},
	}
}

// Reconfigured returns a Procedure with new options that shares p's
// memory of "Allow for this session", for a configuration reload: the new
// policy, hooks and reviewer apply to new calls, and nothing the user
// allowed for a session is forgotten. Persistent approvals ("Allow and
// don't ask me again") come from the new configuration only: the file
// they were written to is their record, so one the operator deleted
// before the reload is revoked at once. p keeps working for calls
// already in flight.
func (p *Procedure) Reconfigured(opts Options) *Procedure {
	n := New(opts)
	n.memory, n.persistMu = p.memory, p.persistMu
	return n
}

const byHost = "host"
const byUser = "user"

// Decide runs the procedure for one call; the first step that decides
// wins:
//
//  1. resolve the mode ([ResolveMode]);
//  2. auto-approved ([AutoApproved]);
//  3. not required by the annotations ([RequiresApproval]);
//  4. remembered for this session (mode auto only; remembered approvals
//     skip the hooks);
//  5. PermissionRequest hooks in order: a deny wins at once, else an
//     allow approves; a failing hook denies unless its on_error is skip;
//  6. the Guardian, with reviewer = guardian and policy on-request;
//  7. the user: a persistent approval ("Allow and don't ask me again",
//     mode remembered) answers for them; else the Asker (policy never
//     denies instead).
//
// Decide never fails: every problem becomes a denial whose Text tells the
// model (and the user reading along) what happened and what to change.
func (p *Procedure) Decide(ctx context.Context, r Request) Decision {
	r.Mode = p.mode(r.Server, r.Tool)
	r.Policy = p.approval.Policy
	// Checked first so nobody is asked about a call that cannot run, and
	// again after an approval: a prompt may have waited for minutes.
	if d, refused := p.auditRefuses(r); refused {
		return d
	}
	d := p.decide(ctx, r)
	if d.Approved {
		if refused, ok := p.auditRefuses(r); ok {
			return refused
		}
	}
	p.observe(ctx, r, d)
	return d
}

// auditRefuses denies the call when an audit gate is configured and the
// audit log cannot be written.
func (p *Procedure) auditRefuses(r Request) (Decision, bool) {
	if p.audit == nil {
		return Decision{}, false
	}
	err := p.audit()
	if err == nil {
		return Decision{}, false
	}
	p.log.Warn("audit log cannot be written; refusing the call (audit on_error = \"deny\")", "call_id", r.CallID, "error", err)
	return p.decided(r, Decision{Step: StepAudit, By: byHost, Text: auditFailedText(err)}, "", ""), true
}

func (p *Procedure) decide(ctx context.Context, r Request) Decision {
	if AutoApproved(p.approval, r.Mode) {
		why := `approval_mode = "approve"`
		if r.Mode != config.ModeApprove {
			why = "approval policy is never with full-access permissions"
		}
		return p.decided(r, Decision{Approved: true, Step: StepMode, By: byHost}, why, "")
	}
	if !RequiresApproval(r.Mode, r.Annotations) {
		return p.decided(r, Decision{Approved: true, Step: StepAnnotations, By: byHost}, annotationsRationale(r.Mode), "")
	}
	if r.Mode == config.ModeAuto {
		if approved, ok := p.memory.remembered(r.SessionID, r.Server, r.Tool); ok {
			if p.sameDefinition(r, StepSession, approved) {
				return p.decided(r, Decision{Approved: true, Step: StepSession, By: byHost}, "allowed earlier in this session", "")
			}
		}
	}
	if d, decided := p.runHooks(ctx, r); decided {
		return d
	}
	if p.approval.Reviewer == config.ReviewerGuardian && p.approval.Policy == config.PolicyOnRequest {
		return p.review(ctx, r)
	}
	// A persistent approval answers in the user's place, after the hooks
	// and the Guardian had their say: it replaces asking the human, never
	// the policy.
	if approved, ok := p.persistent(r); ok && p.sameDefinition(r, StepUser, approved) {
		return p.decided(r, Decision{Approved: true, Step: StepUser, By: byHost},
			"allowed earlier with \"Allow and don't ask me again\"", "")
	}
	return p.askUser(ctx, r)
}

// persistent returns the definition hash a persistent approval of the
// tool is bound to ("" = not bound), and whether there is one: mode
// remembered in the config, or written since it was loaded.
func (p *Procedure) persistent(r Request) (string, bool) {
	if r.Mode == config.ModeRemembered {
		var s config.Server
		if p.server != nil {
			s, _ = p.server(r.Server)
		}
		return s.Tools[r.Tool].ApprovedDefinition, true
	}
	if r.Mode == config.ModeAuto {
		return p.persisted.get(r.Server, r.Tool)
	}
	return "", false
}

// sameDefinition reports whether a remembered approval still applies:
// it was bound to no definition, or to the one the tool has now. When
// the server changed the tool since, the approval lapses and the change
// is recorded with both hashes, so the audit log shows the "rug pull".
func (p *Procedure) sameDefinition(r Request, step DecisionStep, approved string) bool {
	if approved == "" {
		return true
	}
	now := r.definition()
	if now == approved {
		return true
	}
	p.log.Warn("the tool changed since it was approved; asking again", "server", r.Server, "tool", r.Tool,
		"approved_definition", approved, "definition", now)
	if p.events != nil {
		p.events.Emit(events.ApprovalDecision{
			At:                 time.Now(),
			Call:               r.call(),
			Step:               string(step),
			By:                 byHost,
			Verdict:            events.VerdictAbstain,
			Rationale:          "the server changed the tool's definition since it was approved; the approval no longer applies",
			ApprovedDefinition: approved,
			Definition:         now,
		})
	}
	return false
}

// ForgetSession drops what was remembered for one session ("Allow for
// this session"). Front ends call it when a session ends so the memory
// does not grow without bound. Persistent approvals are not affected.
func (p *Procedure) ForgetSession(sessionID string) {
	p.memory.forgetSession(sessionID)
}

func (p *Procedure) mode(server, tool string) config.ApprovalMode {
	if p.server == nil {
		return config.ModeAuto
	}
	s, ok := p.server(server)
	if !ok {
		return config.ModeAuto
	}
	return ResolveMode(s, tool)
}

func (p *Procedure) runHooks(ctx context.Context, r Request) (Decision, bool) {
	var allowedBy string
	for _, h := range p.hooks {
		name := h.Name()
		v, err := p.callHook(ctx, h, r)
		if err == nil && v.Decision != HookNone && v.Decision != HookAllow && v.Decision != HookDeny {
			err = fmt.Errorf("answered with an unknown decision (%s)", v.Decision)
		}
		if err != nil {
			if h.OnError() == config.OnErrorSkip {
				p.log.Warn("permission hook failed; skipping it per on_error", "hook", name, "call_id", r.CallID, "error", err)
				p.emit(r, StepHook, name, events.VerdictAbstain,
					fmt.Sprintf("permission hook %q failed: %v; skipped (on_error = %q)", name, err, config.OnErrorSkip), "")
				continue
			}
			p.log.Warn("permission hook failed; denying the call", "hook", name, "call_id", r.CallID, "error", err)
			return p.decided(r, Decision{Step: StepHook, By: name, Text: hookFailedText(name, err)}, "", ""), true
		}
		switch v.Decision {
		case HookDeny:
			return p.decided(r, Decision{Step: StepHook, By: name, Text: hookDeniedText(name, v.Message)}, "", ""), true
		case HookAllow:
			// Not final yet: a later hook may still deny.
			allowedBy = name
		default:
			p.emit(r, StepHook, name, events.VerdictAbstain, "", "")
		}
	}
	if allowedBy != "" {
		return p.decided(r, Decision{Approved: true, Step: StepHook, By: allowedBy}, "allowed by permission hook", ""), true
	}
	return Decision{}, false
}

// callHook turns a panicking hook into a failure, so one broken hook
// cannot take the host down or skip the rest of the procedure.
func (p *Procedure) callHook(ctx context.Context, h Hook, r Request) (v HookVerdict, err error) {
	defer func() {
		if rec := recover(); rec != nil {
			p.log.Error("permission hook panicked", "hook", h.Name(), "panic", rec, "stack", string(debug.Stack()))
			v, err = HookVerdict{}, fmt.Errorf("panicked: %v", rec)
		}
	}()
	return h.PermissionRequest(ctx, r)
}

func (p *Procedure) review(ctx context.Context, r Request) Decision {
	if p.reviewer == nil {
		return p.decided(r, Decision{Step: StepReviewer, By: string(config.ReviewerGuardian), Text: noGuardianText}, "", "")
	}
	name := p.reviewer.Name()
	a, err := p.callReviewer(ctx, r)
	switch {
	case errors.Is(err, ErrReviewTimeout):
		return p.decided(r, Decision{Step: StepReviewer, By: name, Text: TextReviewTimeout}, "", "")
	case err != nil:
		p.log.Warn("approval review failed; denying the call", "reviewer", name, "call_id", r.CallID, "error", err)
		return p.decided(r, Decision{Step: StepReviewer, By: name, Text: reviewFailedText(err.Error())}, "", "")
	case a.Outcome == OutcomeAllow:
		return p.decided(r, Decision{Approved: true, Step: StepReviewer, By: name}, a.Rationale, a.RiskLevel)
	case a.Outcome == OutcomeDeny:
		return p.decided(r, Decision{Step: StepReviewer, By: name, Text: reviewDeniedText(a.Rationale)}, "", a.RiskLevel)
	}
	msg := fmt.Sprintf("the reviewer answered with outcome %q; expected %q or %q", a.Outcome, OutcomeAllow, OutcomeDeny)
	return p.decided(r, Decision{Step: StepReviewer, By: name, Text: reviewFailedText(msg)}, "", a.RiskLevel)
}

func (p *Procedure) callReviewer(ctx context.Context, r Request) (a Assessment, err error) {
	defer func() {
		if rec := recover(); rec != nil {
			p.log.Error("approval reviewer panicked", "panic", rec, "stack", string(debug.Stack()))
			a, err = Assessment{}, fmt.Errorf("the reviewer panicked: %v", rec)
		}
	}()
	return p.reviewer.Review(ctx, r)
}

func (p *Procedure) askUser(ctx context.Context, r Request) Decision {
	if p.approval.Policy == config.PolicyNever {
		return p.decided(r, Decision{Step: StepUser, By: byHost, Text: TextPolicyNever}, "", "")
	}
	asker := r.Asker
	if asker == nil {
		asker = p.asker
	}
	if asker == nil {
		return p.decided(r, Decision{Step: StepUser, By: byHost,
			Text: nobodyToAskText(r.Server, r.Tool, "no approver is configured for this host")}, "", "")
	}
	choices := []Choice{ChoiceAllow}
	if r.Mode == config.ModeAuto || r.Mode == config.ModeRemembered {
		// Remembering makes sense only where the annotations, not the
		// user's config, asked for approval: prompt and writes modes say
		// "ask me every time".
		choices = append(choices, ChoiceAllowSession)
		if !p.noPersist {
			choices = append(choices, ChoiceAllowAlways)
		}
	}
	choices = append(choices, ChoiceDecline, ChoiceCancel)

	choice, err := asker.AskApproval(ctx, Prompt{
		Request:  r,
		Mode:     r.Mode,
		Question: question(r.Server, r.Tool),
		Choices:  choices,
	})
	var (
		denial *AskerDenial
		nobody *NobodyToAsk
	)
	switch {
	case err == nil:
	case errors.As(err, &denial):
		return p.decided(r, Decision{Step: StepUser, By: denial.By, Text: denial.Text}, "", "")
	case ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return p.decided(r, Decision{Step: StepUser, By: byUser, Text: TextUserCancelled}, "", "")
	case errors.As(err, &nobody):
		return p.decided(r, Decision{Step: StepUser, By: byHost, Text: nobodyToAskNextText(nobody)}, "", "")
	case errors.Is(err, ErrNobodyToAsk):
		return p.decided(r, Decision{Step: StepUser, By: byHost, Text: nobodyToAskText(r.Server, r.Tool, err.Error())}, "", "")
	default:
		p.log.Warn("approval prompt failed; denying the call", "call_id", r.CallID, "error", err)
		return p.decided(r, Decision{Step: StepUser, By: byHost, Text: askFailedText(err)}, "", "")
	}

	if choice == ChoiceAllowAlways && p.noPersist {
		p.log.Debug("persistent approval is not allowed here; treating the answer as Allow", "answer", choice.String())
		choice = ChoiceAllow
	}
	if r.Mode != config.ModeAuto && r.Mode != config.ModeRemembered && (choice == ChoiceAllowSession || choice == ChoiceAllowAlways) {
		p.log.Debug("approval mode asks every time; treating a remembering answer as Allow", "mode", r.Mode, "answer", choice.String())
		choice = ChoiceAllow
	}
	switch choice {
	case ChoiceAllow:
		return p.decided(r, Decision{Approved: true, Step: StepUser, By: byUser}, choice.String(), "")
	case ChoiceAllowSession:
		p.memory.rememberSession(r.SessionID, r.Server, r.Tool, r.definition())
		return p.decided(r, Decision{Approved: true, Step: StepUser, By: byUser}, choice.String(), "")
	case ChoiceAllowAlways:
		note := choice.String()
		if err := p.rememberAlways(r); err != nil {
			note += "; not saved to the config file (" + err.Error() + "), remembered for this session only"
		}
		return p.decided(r, Decision{Approved: true, Step: StepUser, By: byUser}, note, "")
	case ChoiceDecline:
		return p.decided(r, Decision{Step: StepUser, By: byUser, Text: TextUserRejected}, "", "")
	case ChoiceCancel:
		return p.decided(r, Decision{Step: StepUser, By: byUser, Text: TextUserCancelled}, "", "")
	}
	return p.decided(r, Decision{Step: StepUser, By: byHost, Text: unknownChoiceText(choice)}, "", "")
}

// rememberAlways persists "Allow and don't ask me again" and remembers it
// until the next reload reads it back from the file. When it cannot be
// saved, the user still gets what they can: no more questions in this
// session. A saved approval is deliberately not also remembered for the
// session, so that deleting it from the file and reloading revokes it
// for this session too.
func (p *Procedure) rememberAlways(r Request) error {
	if p.persist == nil {
		p.memory.rememberSession(r.SessionID, r.Server, r.Tool, r.definition())
		p.log.Info("no config writer; remembering the approval for this session only", "server", r.Server, "tool", r.Tool)
		return errors.New("no config file to write to")
	}
	p.persistMu.Lock()
	err := p.persist(r.Server, r.Tool, r.definition())
	p.persistMu.Unlock()
	if err != nil {
		p.log.Warn("could not save \"Allow and don't ask me again\"; remembering it for this session only",
			"server", r.Server, "tool", r.Tool, "error", err)
		p.memory.rememberSession(r.SessionID, r.Server, r.Tool, r.definition())
		return err
	}
	p.persisted.add(r.Server, r.Tool, r.definition())
	return nil
}

// decided records d as an event and returns it. note is the event's
// rationale for approvals; for denials the rationale is d.Text.
func (p *Procedure) decided(r Request, d Decision, note, risk string) Decision {
	verdict := events.VerdictDenied
	rationale := d.Text
	if d.Approved {
		verdict = events.VerdictApproved
		rationale = note
	}
	if p.log.IsDebug() { // on every call: boxing the arguments costs even when nothing is logged
		p.log.Debug("approval decision", "call_id", r.CallID, "server", r.Server, "tool", r.Tool,
			"step", d.Step, "by", d.By, "verdict", verdict)
	}
	p.emit(r, d.Step, d.By, verdict, rationale, risk)
	return d
}

func (p *Procedure) emit(r Request, step DecisionStep, by, verdict, rationale, risk string) {
	p.emitDecision(r, Decision{Step: step, By: by}, verdict, rationale, risk, nil, nil)
}

// emitDecision records one step's verdict; before and after are set when
// a PreToolUse hook rewrote the arguments.
func (p *Procedure) emitDecision(r Request, d Decision, verdict, rationale, risk string, before, after json.RawMessage) {
	if p.events == nil {
		return
	}
	step, by := d.Step, d.By
	p.events.Emit(events.ApprovalDecision{
		Before:    before,
		After:     after,
		At:        time.Now(),
		Call:      r.call(),
		Step:      string(step),
		By:        by,
		Verdict:   verdict,
		Rationale: rationale,
		RiskLevel: risk,
	})
}

// annotationsRationale is the audit rationale of a call its annotations
// approved. It is on every such call, so the common modes' texts are
// built once.
func annotationsRationale(mode config.ApprovalMode) string {
	switch mode {
	case config.ModeAuto:
		return rationaleAuto
	case config.ModePrompt:
		return rationalePrompt
	}
	return fmt.Sprintf(annotationsRationaleFormat, mode)
}

const annotationsRationaleFormat = "mode %s does not require approval for this tool's annotations"

var (
	rationaleAuto   = fmt.Sprintf(annotationsRationaleFormat, config.ModeAuto)
	rationalePrompt = fmt.Sprintf(annotationsRationaleFormat, config.ModePrompt)
)
