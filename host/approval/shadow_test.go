package approval

import (
	"context"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/internal/testwait"
)

// shadowEvents collects shadow decisions and signals each one.
type shadowEvents struct {
	mu  sync.Mutex
	got []events.ShadowDecision
	ch  chan struct{}
}

func (s *shadowEvents) Emit(e events.Event) {
	if d, ok := e.(events.ShadowDecision); ok {
		s.mu.Lock()
		s.got = append(s.got, d)
		s.mu.Unlock()
		s.ch <- struct{}{}
	}
}

func allowHook(name string) *fakeHook {
	return &fakeHook{NameV: name, PermissionRequestF: func(context.Context, Request) (HookVerdict, error) {
		return HookVerdict{Decision: HookAllow}, nil
	}}
}

// TestShadowHooksNeverChangeOrDelayADecision: a shadow hook that denies
// everything changes no decision and is recorded as differing; one that
// hangs does not delay the call, and is recorded as an error when the
// runner closes.
func TestShadowHooksNeverChangeOrDelayADecision(t *testing.T) {
	rec := &shadowEvents{ch: make(chan struct{}, 16)}
	runner := NewShadowRunner()
	defer runner.Close()
	denyAll := &fakeHook{NameV: "deny-all", PermissionRequestF: func(context.Context, Request) (HookVerdict, error) {
		return HookVerdict{Decision: HookDeny, Message: "shadow says no"}, nil
	}}
	hang := &fakeHook{NameV: "hang", PermissionRequestF: func(ctx context.Context, _ Request) (HookVerdict, error) {
		<-ctx.Done()
		return HookVerdict{}, ctx.Err()
	}}
	p := New(Options{Approval: onRequest, Server: servers(config.ModePrompt), Hooks: []Hook{allowHook("enforced")},
		ShadowHooks: []Hook{denyAll, hang}, ShadowRunner: runner, Events: rec})

	ctx, endCall := context.WithCancel(t.Context())
	d := p.Decide(ctx, request("s1", "write_file"))
	if !d.Approved || d.By != "enforced" {
		t.Fatalf("decision = %+v, want approved by the enforced hook", d)
	}
	endCall() // the call ends; deny-all still answers
	testwait.Recv(t, rec.ch, "deny-all's shadow decision")
	runner.Close() // the host stops: hang is cancelled
	testwait.Recv(t, rec.ch, "hang's shadow decision")
	rec.mu.Lock()
	defer rec.mu.Unlock()
	by := map[string]events.ShadowDecision{}
	for _, g := range rec.got {
		by[g.Hook] = g
	}
	if g := by["deny-all"]; g.Decision != ShadowDeny || g.Enforced != ShadowAllow || !g.Differs || g.Message != "shadow says no" {
		t.Errorf("deny-all recorded %+v", g)
	}
	if g := by["hang"]; g.Decision != ShadowError || g.Differs || g.Error == "" {
		t.Errorf("hang recorded %+v", g)
	}
}

// TestShadowHookDoesNotDelayDecide: Decide returns while a shadow hook
// is still blocked (it is released only afterwards), and the runner's
// Close waits for it.
func TestShadowHookDoesNotDelayDecide(t *testing.T) {
	runner := NewShadowRunner()
	entered, release := make(chan struct{}), make(chan struct{})
	blocked := &fakeHook{NameV: "blocked", PermissionRequestF: func(ctx context.Context, _ Request) (HookVerdict, error) {
		close(entered)
		<-release
		return HookVerdict{Decision: HookDeny}, nil
	}}
	rec := &shadowEvents{ch: make(chan struct{}, 1)}
	p := New(Options{Approval: onRequest, Server: servers(config.ModePrompt), Hooks: []Hook{allowHook("enforced")},
		ShadowHooks: []Hook{blocked}, ShadowRunner: runner, Events: rec})
	if d := p.Decide(t.Context(), request("s1", "write_file")); !d.Approved {
		t.Fatalf("decision = %+v", d)
	}
	testwait.Recv(t, entered, "the shadow hook to start") // it runs, and Decide has returned
	close(release)
	testwait.Recv(t, rec.ch, "the shadow decision")
	runner.Close()
	if rec.got[0].Decision != ShadowDeny || !rec.got[0].Differs {
		t.Errorf("recorded %+v", rec.got[0])
	}
}
