package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Jitter is the largest share of a delay taken off at random. Spreading
// restarts out keeps many servers or plugins that failed together (a host
// resume, a network blip) from coming back in lockstep; taking it off,
// rather than adding it, keeps Max a true upper bound.
const Jitter = 0.2

// Policy is a capped exponential backoff: the first retry waits Initial,
// each further retry twice the previous one, never more than Max, each
// less a random share of at most [Jitter].
type Policy struct {
	Initial time.Duration
	// Max caps every delay; zero or less than Initial means Initial.
	Max time.Duration
	// Rand returns a number in [0, 1) that picks the jitter; nil means
	// math/rand/v2. Tests inject a fixed source to get exact delays.
	Rand func() float64
}

// Delay returns the wait before retry n, counting from 1 for the first
// retry; n < 1 counts as 1.
func (p Policy) Delay(n int) time.Duration {
	d := p.Base(n)
	r := rand.Float64
	if p.Rand != nil {
		r = p.Rand
	}
	return d - time.Duration(float64(d)*Jitter*r())
}

// Base returns the wait before retry n without jitter: the upper bound
// of [Policy.Delay]. Callers report it (for example "next start in") when
// they need a number that does not change between calls.
func (p Policy) Base(n int) time.Duration {
	if p.Initial <= 0 {
		return 0
	}
	ceiling := max(p.Max, p.Initial)
	d := p.Initial
	for i := 1; i < n && d < ceiling; i++ {
		if d > ceiling/2 {
			return ceiling // doubling would pass the cap (or overflow)
		}
		d *= 2
	}
	return d
}

// Sleep waits d, or until ctx is done, in which case it returns ctx's
// error. It holds no timer after it returns.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
