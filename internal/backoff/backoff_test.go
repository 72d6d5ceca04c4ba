package backoff_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolgate/toolgate/internal/backoff"
)

func fixed(r float64) func() float64 { return func() float64 { return r } }

func TestDelaySequence(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name   string
		policy backoff.Policy
		want   []time.Duration // Delay(1), Delay(2), …
	}{
		{"doubles up to the cap", backoff.Policy{Initial: 100 * ms, Max: time.Second, Rand: fixed(0)},
			[]time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, time.Second, time.Second}},
		{"a cap between steps is reached, not passed", backoff.Policy{Initial: 250 * ms, Max: 600 * ms, Rand: fixed(0)},
			[]time.Duration{250 * ms, 500 * ms, 600 * ms, 600 * ms}},
		{"no cap below Initial", backoff.Policy{Initial: time.Second, Rand: fixed(0)},
			[]time.Duration{time.Second, time.Second}},
		{"the largest jitter takes 20% off", backoff.Policy{Initial: 100 * ms, Max: 400 * ms, Rand: fixed(1)},
			[]time.Duration{80 * ms, 160 * ms, 320 * ms, 320 * ms}},
		{"half the jitter", backoff.Policy{Initial: 100 * ms, Max: 400 * ms, Rand: fixed(0.5)},
			[]time.Duration{90 * ms, 180 * ms, 360 * ms, 360 * ms}},
		{"a zero Initial never waits", backoff.Policy{Max: time.Second, Rand: fixed(0)},
			[]time.Duration{0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, want := range tc.want {
				if got := tc.policy.Delay(i + 1); got != want {
					t.Errorf("Delay(%d) = %s, want %s", i+1, got, want)
				}
			}
		})
	}
}

func TestDelayEdges(t *testing.T) {
	p := backoff.Policy{Initial: time.Second, Max: 30 * time.Second, Rand: fixed(0)}
	if got := p.Delay(0); got != time.Second {
		t.Errorf("Delay(0) = %s, want the first delay (1s)", got)
	}
	if got := p.Delay(1000); got != 30*time.Second {
		t.Errorf("Delay(1000) = %s, want the cap (30s)", got)
	}
	huge := backoff.Policy{Initial: time.Hour, Max: math.MaxInt64, Rand: fixed(0)}
	if got := huge.Delay(200); got != math.MaxInt64 {
		t.Errorf("Delay(200) with an unbounded cap = %s, want the cap, not an overflow", got)
	}
}

// TestJitterBounds: with the real random source, every delay stays within
// (80%, 100%] of its base, and the delays are not all the same.
func TestJitterBounds(t *testing.T) {
	p := backoff.Policy{Initial: 100 * time.Millisecond, Max: 10 * time.Second}
	for n := 1; n <= 10; n++ {
		base := p.Base(n)
		seen := map[time.Duration]bool{}
		for range 200 {
			d := p.Delay(n)
			if d > base || float64(d) < float64(base)*(1-backoff.Jitter) {
				t.Fatalf("Delay(%d) = %s, outside [%s, %s]", n, d, time.Duration(float64(base)*(1-backoff.Jitter)), base)
			}
			seen[d] = true
		}
		if len(seen) < 2 {
			t.Errorf("Delay(%d) gave the same value 200 times: no jitter", n)
		}
	}
}

func TestSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if err := backoff.Sleep(t.Context(), 3*time.Second); err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got != 3*time.Second {
			t.Errorf("slept %s, want 3s", got)
		}

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start = time.Now()
		if err := backoff.Sleep(ctx, time.Hour); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want context.DeadlineExceeded", err)
		}
		if got := time.Since(start); got != time.Second {
			t.Errorf("a cancelled sleep returned after %s, want 1s", got)
		}
	})
}
