package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
)

// PreAction is what a PreToolUse hook wants done with a call.
type PreAction int

const (
	PreContinue PreAction = iota // run the call as proposed (or as rewritten by an earlier hook)
	PreBlock                     // refuse it: Reason is the model's text
	PreRewrite                   // run it with Arguments instead
)

// PreVerdict is one PreToolUse hook's answer.
type PreVerdict struct {
	Action    PreAction
	Reason    string
	Arguments json.RawMessage // PreRewrite: the new arguments object
}

// PreToolUseHook sees every call before the approval procedure, remembered
// approvals included: it may block the call or rewrite its arguments.
type PreToolUseHook interface {
	Name() string
	OnError() config.OnError
	PreToolUse(ctx context.Context, r Request) (PreVerdict, error)
}

// PostResult is what a PostToolUse hook sees of an executed call.
type PostResult struct {
	Status string // events.CallCompleted or events.CallFailed
	// Output returns the projected result, as the model receives it
	// (computed on demand: most hooks do not read it).
	Output  func() string
	IsError bool
	// Raw is the server's result; nil when the call failed before one
	// came back (then Err says why).
	Raw      *mcp.CallToolResult
	Err      error
	Duration time.Duration
}

// PostToolUseHook sees the projected result after execution and may
// attach a note for the model. Its failures are logged, never fatal: the
// call already ran.
type PostToolUseHook interface {
	Name() string
	PostToolUse(ctx context.Context, r Request, res PostResult) (note string, err error)
}

// Matcher is implemented by hooks that apply to some calls only (server
// and tool globs, a regex over the model name). A hook that does not
// implement it sees every call.
type Matcher interface {
	Matches(r Request) bool
}

func applies(h any, r Request) bool {
	m, ok := h.(Matcher)
	return !ok || m.Matches(r)
}

// PreToolUse runs the PreToolUse hooks in config order. Each sees the
// arguments as rewritten by the hooks before it. A block ends the chain
// with a denial; a rewrite is validated against the tool's input schema
// and recorded with before and after. A rewrite that does not validate,
// or cannot be validated because schema is nil or does not resolve, is a
// failure of the hook. A failing hook denies (on_error = "deny") or is skipped.
//
// It returns the request to run and, when the call must not run, a
// denying Decision.
func (p *Procedure) PreToolUse(ctx context.Context, r Request, schema any) (Request, *Decision) {
	for _, h := range p.pre {
		if !applies(h, r) {
			continue
		}
		v, err := p.runPre(ctx, h, r)
		if err == nil {
			switch v.Action {
			case PreContinue:
				continue
			case PreBlock:
				text := v.Reason
				if text == "" {
					text = fmt.Sprintf("blocked by PreToolUse hook %q", h.Name())
				}
				d := Decision{Step: StepPreToolUse, By: h.Name(), Text: text}
				p.emitDecision(r, d, events.VerdictDenied, text, "", nil, nil)
				return r, &d
			case PreRewrite:
				if err = validateArguments(schema, v.Arguments); err == nil {
					before := r.Arguments
					r.Arguments = v.Arguments
					p.emitDecision(r, Decision{Approved: true, Step: StepPreToolUse, By: h.Name()}, events.VerdictAbstain,
						"arguments rewritten", "", before, v.Arguments)
					continue
				}
				err = fmt.Errorf("the rewrite was refused: %w", err)
			default:
				err = fmt.Errorf("%w: unknown PreToolUse action %d", errBadHookAnswer, v.Action)
			}
		}
		if h.OnError() == config.OnErrorSkip {
			p.log.Warn("PreToolUse hook failed; skipping it (on_error = \"skip\")", "hook", h.Name(), "error", err)
			p.emitDecision(r, Decision{Step: StepPreToolUse, By: h.Name()}, events.VerdictAbstain,
				"hook failed and was skipped: "+err.Error(), "", nil, nil)
			continue
		}
		text := fmt.Sprintf("PreToolUse hook %q failed: %v; the call was denied (on_error = \"deny\")", h.Name(), err)
		d := Decision{Step: StepPreToolUse, By: h.Name(), Text: text}
		p.emitDecision(r, d, events.VerdictDenied, text, "", nil, nil)
		return r, &d
	}
	return r, nil
}

var errBadHookAnswer = errors.New("hook answered nonsense")

func (p *Procedure) runPre(ctx context.Context, h PreToolUseHook, r Request) (v PreVerdict, err error) {
	defer func() {
		if rec := recover(); rec != nil {
			p.log.Error("PreToolUse hook panicked", "hook", h.Name(), "panic", rec, "stack", string(debug.Stack()))
			err = fmt.Errorf("hook panicked: %v", rec)
		}
	}()
	return h.PreToolUse(ctx, r)
}

// PostToolUse runs the PostToolUse hooks in config order and returns the
// notes they attach for the model.
func (p *Procedure) PostToolUse(ctx context.Context, r Request, res PostResult) []string {
	var notes []string
	for _, h := range p.post {
		if !applies(h, r) {
			continue
		}
		note, err := func() (note string, err error) {
			defer func() {
				if rec := recover(); rec != nil {
					err = fmt.Errorf("hook panicked: %v", rec)
				}
			}()
			return h.PostToolUse(ctx, r, res)
		}()
		if err != nil {
			p.log.Warn("PostToolUse hook failed", "hook", h.Name(), "call_id", r.CallID, "error", err)
			continue
		}
		if note != "" {
			notes = append(notes, fmt.Sprintf("Note from hook %q: %s", h.Name(), note))
		}
	}
	return notes
}

// ErrRewriteUnchecked is wrapped by the error of a PreToolUse rewrite that
// could not be checked because the tool's input schema is missing or
// cannot be resolved (a $ref nobody can follow, say). Such a rewrite is
// refused: an unchecked rewrite could send the server anything.
var ErrRewriteUnchecked = errors.New("the tool's input schema cannot be resolved, so the rewritten arguments cannot be checked")

// validateArguments checks rewritten arguments against a tool's input
// schema: a hook must not turn a valid call into one the server cannot
// take. A schema that is missing or does not resolve fails the check.
func validateArguments(schema any, args json.RawMessage) error {
	var v map[string]any
	if err := json.Unmarshal(args, &v); err != nil || v == nil {
		return fmt.Errorf("%w: arguments must be a JSON object", errBadHookAnswer)
	}
	if schema == nil {
		return fmt.Errorf("%w (the tool declares no input schema)", ErrRewriteUnchecked)
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return fmt.Errorf("%w (reading it: %v)", ErrRewriteUnchecked, err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("%w (reading it: %v)", ErrRewriteUnchecked, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return fmt.Errorf("%w (%v)", ErrRewriteUnchecked, err)
	}
	var doc any
	_ = json.Unmarshal(args, &doc)
	if err := rs.Validate(doc); err != nil {
		return fmt.Errorf("%w: the rewritten arguments do not match the tool's input schema: %v", errBadHookAnswer, err)
	}
	return nil
}
