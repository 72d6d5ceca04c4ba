package mcpclient

import (
	"context"
	"maps"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// fired records when each timer of a pauseGroup fired, in the bubble's
// fake time.
type fired struct {
	mu sync.Mutex
	at map[string]time.Duration
}

func (f *fired) timer(g *pauseGroup, name string, d time.Duration, t0 time.Time) *activeTimer {
	return g.start(d, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.at == nil {
			f.at = map[string]time.Duration{}
		}
		f.at[name] = time.Since(t0)
	})
}

func (f *fired) snapshot() map[string]time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.at)
}

func TestPauseGroupSharesOneClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g pauseGroup
		defer g.close()
		t0 := time.Now()
		var fired fired
		a := fired.timer(&g, "a", 10*time.Second, t0)
		clock := g.clock
		// Later deadlines leave the clock as it is: no timer per call.
		for range 100 {
			g.stop(fired.timer(&g, "plain", 20*time.Second, t0))
		}
		if g.clock != clock || !g.armedAt.Equal(t0.Add(10*time.Second)) {
			t.Fatalf("a call with a later deadline re-armed the clock: armed at %v, want %v", g.armedAt.Sub(t0), 10*time.Second)
		}
		// An earlier deadline brings it forward.
		b := fired.timer(&g, "b", 3*time.Second, t0)
		time.Sleep(30 * time.Second)
		synctest.Wait()
		if at := fired.snapshot(); len(at) != 2 || at["b"] != 3*time.Second || at["a"] != 10*time.Second {
			t.Fatalf("fired at %v, want b at 3s, a at 10s, the stopped ones never", at)
		}
		g.stop(a)
		g.stop(b)
	})
}

func TestPauseGroupPausesWhileAsking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g pauseGroup
		defer g.close()
		t0 := time.Now()
		var fired fired
		defer g.stop(fired.timer(&g, "a", 10*time.Second, t0))
		time.Sleep(4 * time.Second)
		g.begin() // an elicitation for 100s: the clock stops
		time.Sleep(100 * time.Second)
		synctest.Wait()
		if at := fired.snapshot(); len(at) > 0 {
			t.Fatalf("the timeout ran while an elicitation was pending: fired at %v", at)
		}
		g.end()
		defer g.stop(fired.timer(&g, "c", 1*time.Second, t0)) // started after the pause
		time.Sleep(time.Minute)
		synctest.Wait()
		if at := fired.snapshot(); at["a"] != 110*time.Second || at["c"] != 105*time.Second {
			t.Fatalf("fired at %v, want a at 110s (4s + pause + 6s), c at 105s", at)
		}
	})
}

func TestDeadlineWithin(t *testing.T) {
	if deadlineWithin(context.Background(), time.Second) {
		t.Error("a context without a deadline needs the timer")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if !deadlineWithin(ctx, time.Hour) {
		t.Error("a deadline before the timeout makes the timer useless")
	}
	if deadlineWithin(ctx, time.Second) {
		t.Error("a deadline after the timeout needs the timer")
	}
}
