package approval

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/toolgate/toolgate/host/events"
)

// ShadowRunner runs shadow hooks (plugin blocks with mode = "shadow")
// beside the enforced chain: after [Procedure.Decide] has decided, each
// shadow hook gets the same request in a goroutine of its own, and its
// answer is recorded as an events.ShadowDecision. Nothing waits for it,
// and nothing it answers, fails or hangs on changes a decision.
//
// A shadow hook's run keeps the call's context values but not its
// cancellation: a fast call usually ends before a plugin answers, and the
// answer is what shadow mode is for. It is bounded instead by the hook's
// own timeout (the plugin block's), by ShadowTimeout, and by the runner:
// Close cancels every run and waits for them, so no goroutine outlives
// the host.
type ShadowRunner struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	now    func() time.Time
}

// NewShadowRunner returns a runner; Close it when the host stops.
func NewShadowRunner() *ShadowRunner {
	ctx, cancel := context.WithCancel(context.Background())
	return &ShadowRunner{ctx: ctx, cancel: cancel, now: time.Now}
}

// Close cancels the shadow hooks still running and waits for them.
func (s *ShadowRunner) Close() {
	s.cancel()
	s.wg.Wait()
}

// ShadowTimeout bounds one shadow hook run whatever the hook's own
// timeout says.
const ShadowTimeout = time.Minute

// Shadow decision values.
const (
	ShadowAllow = "allow"
	ShadowDeny  = "deny"
	ShadowNone  = "none"  // the hook had no opinion
	ShadowError = "error" // failed, timed out, or was cancelled when the host stopped
)

// observe starts the shadow hooks for a decided call.
func (p *Procedure) observe(ctx context.Context, r Request, d Decision) {
	if p.shadowRun == nil || len(p.shadow) == 0 || p.events == nil {
		return
	}
	p.runShadow(ctx, r, d)
}

// runShadow is observe's work, apart so that a call without shadow hooks
// does not pay for what the goroutines capture (observe is on every call).
func (p *Procedure) runShadow(ctx context.Context, r Request, d Decision) {
	s := p.shadowRun
	enforced := ShadowDeny
	if d.Approved {
		enforced = ShadowAllow
	}
	for _, h := range p.shadow {
		s.wg.Go(func() {
			hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShadowTimeout)
			defer cancel()
			stop := context.AfterFunc(s.ctx, cancel)
			defer stop()
			started := s.now()
			v, err := p.callHook(hctx, h, r)
			ev := events.ShadowDecision{
				At:           s.now(),
				Call:         events.Call{CallID: r.CallID, SessionID: r.SessionID, Server: r.Server, Tool: r.Tool, ModelName: r.ModelName, Caller: r.Caller},
				Hook:         h.Name(),
				Enforced:     enforced,
				EnforcedStep: string(d.Step),
				Duration:     s.now().Sub(started),
			}
			switch {
			case err != nil:
				ev.Decision, ev.Error = ShadowError, err.Error()
			case v.Decision == HookAllow:
				ev.Decision = ShadowAllow
			case v.Decision == HookDeny:
				ev.Decision, ev.Message = ShadowDeny, v.Message
			case v.Decision == HookNone:
				ev.Decision = ShadowNone
			default:
				ev.Decision, ev.Error = ShadowError, fmt.Sprintf("answered with an unknown decision (%s)", v.Decision)
			}
			ev.Differs = (ev.Decision == ShadowAllow || ev.Decision == ShadowDeny) && ev.Decision != enforced
			p.events.Emit(ev)
		})
	}
}
