package approval

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
)

// ResourceReadHook is a PreToolUse hook that also decides on resource
// reads before they reach the server. Only hooks that implement it are
// asked; it answers PreContinue or PreBlock.
type ResourceReadHook interface {
	PreToolUseHook
	PreResourceRead(ctx context.Context, r Request) (PreVerdict, error)
}

// PromptGetHook is a PreToolUse hook that also decides on prompt gets.
type PromptGetHook interface {
	PreToolUseHook
	PrePromptGet(ctx context.Context, r Request) (PreVerdict, error)
}

// PreResourceRead runs the hooks that decide on resource reads, in config
// order, like [Procedure.PreToolUse] without rewrites: a block ends the
// chain with a denial, a failing hook denies or is skipped (on_error).
// It returns nil when the read may go on.
func (p *Procedure) PreResourceRead(ctx context.Context, r Request) *Decision {
	return p.preRequest(ctx, r, "PreResourceRead", StepPreResourceRead, func(h PreToolUseHook) (PreVerdict, bool, error) {
		rh, ok := h.(ResourceReadHook)
		if !ok {
			return PreVerdict{}, false, nil
		}
		v, err := rh.PreResourceRead(ctx, r)
		return v, true, err
	})
}

// PrePromptGet runs the hooks that decide on prompt gets, like
// [Procedure.PreResourceRead].
func (p *Procedure) PrePromptGet(ctx context.Context, r Request) *Decision {
	return p.preRequest(ctx, r, "PrePromptGet", StepPrePromptGet, func(h PreToolUseHook) (PreVerdict, bool, error) {
		ph, ok := h.(PromptGetHook)
		if !ok {
			return PreVerdict{}, false, nil
		}
		v, err := ph.PrePromptGet(ctx, r)
		return v, true, err
	})
}

// preRequest is the chain of one request event; ask reports false for a
// hook that does not take the event.
func (p *Procedure) preRequest(ctx context.Context, r Request, event string, step DecisionStep, ask func(PreToolUseHook) (PreVerdict, bool, error)) *Decision {
	for _, h := range p.pre {
		v, asked, err := func() (v PreVerdict, asked bool, err error) {
			defer func() {
				if rec := recover(); rec != nil {
					p.log.Error(event+" hook panicked", "hook", h.Name(), "panic", rec, "stack", string(debug.Stack()))
					asked, err = true, fmt.Errorf("hook panicked: %v", rec)
				}
			}()
			return ask(h)
		}()
		if !asked {
			continue
		}
		if err == nil {
			switch v.Action {
			case PreContinue:
				continue
			case PreBlock:
				text := v.Reason
				if text == "" {
					text = fmt.Sprintf("blocked by %s hook %q", event, h.Name())
				}
				d := Decision{Step: step, By: h.Name(), Text: text}
				p.emitDecision(r, d, events.VerdictDenied, text, "", nil, nil)
				return &d
			default:
				err = fmt.Errorf("%w: %s may only continue or block", errBadHookAnswer, event)
			}
		}
		if h.OnError() == config.OnErrorSkip {
			p.log.Warn(event+" hook failed; skipping it (on_error = \"skip\")", "hook", h.Name(), "error", err)
			p.emitDecision(r, Decision{Step: step, By: h.Name()}, events.VerdictAbstain,
				"hook failed and was skipped: "+err.Error(), "", nil, nil)
			continue
		}
		text := fmt.Sprintf("%s hook %q failed: %v; the request was denied (on_error = \"deny\")", event, h.Name(), err)
		d := Decision{Step: step, By: h.Name(), Text: text}
		p.emitDecision(r, d, events.VerdictDenied, text, "", nil, nil)
		return &d
	}
	return nil
}
