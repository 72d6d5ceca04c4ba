package ratelimit

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/toolgate/toolgate/host/identity"
	"github.com/toolgate/toolgate/internal/glob"
)

// maxBuckets bounds the memory of per-caller and per-tool buckets; past
// it, buckets that are full again (idle long enough) are dropped.
const maxBuckets = 10000

// ErrLimited is matched (errors.Is) by a *LimitedError.
var ErrLimited = errors.New("rate limit reached")

// Limit is one token bucket (or one per caller, per tool, or per both)
// for the calls it matches: a serve limit block, as the host's wiring
// translates it.
type Limit struct {
	// Callers are globs over the caller's subject; empty = every caller
	// (including the unknown caller of a setup without auth, "").
	Callers []string
	// Tools are globs over the model-visible tool name; empty = every tool.
	Tools []string
	// PerCaller and PerTool say what has a bucket of its own; neither =
	// one bucket shared by every matched call.
	PerCaller, PerTool bool
	// Calls may be made per Period, on average.
	Calls  int
	Period time.Duration
	// Burst is the bucket size: how many calls may start back to back
	// once the bucket is full. It does not bound calls in flight: a call
	// takes its token when it starts.
	Burst int
	// Where names the limit for texts ("config.hcl:12"); "" = unnamed.
	Where string
}

// String is the limit as a refusal names it.
func (l Limit) String() string {
	if l.Where == "" {
		return fmt.Sprintf("%d calls per %s", l.Calls, l.Period)
	}
	return fmt.Sprintf("%d calls per %s (limit at %s)", l.Calls, l.Period, l.Where)
}

// LimitedError is a refused call: which limit, and when to retry.
type LimitedError struct {
	Limit      Limit
	Caller     string // subject, "" when unknown
	Tool       string // model-visible name
	RetryAfter time.Duration
	At         time.Time // when the call was refused
}

func (e *LimitedError) Error() string {
	who := ""
	if e.Caller != "" {
		who = fmt.Sprintf(" for caller %q", e.Caller)
	}
	secs := int(math.Ceil(e.RetryAfter.Seconds()))
	return fmt.Sprintf("toolgate: rate limit reached%s on %s: at most %s. Retry in %d s (after %s); do not retry before.",
		who, e.Tool, e.Limit, secs, e.At.Add(e.RetryAfter).UTC().Format(time.RFC3339))
}

func (e *LimitedError) Is(target error) bool { return target == ErrLimited }

type limit struct {
	cfg     Limit
	callers glob.List
	tools   glob.List
}

type bucketKey struct {
	limit  int
	caller string
	tool   string
}

// Limiter checks calls against the limit blocks. Safe for concurrent use.
type Limiter struct {
	limits []limit
	now    func() time.Time

	mu      sync.Mutex
	buckets map[bucketKey]*rate.Limiter
}

// New builds a Limiter for limits, whose globs are valid (the
// configuration checked them); now is the clock (nil = time.Now). It
// returns nil when there are none.
func New(limits []Limit, now func() time.Time) *Limiter {
	if len(limits) == 0 {
		return nil
	}
	if now == nil {
		now = time.Now
	}
	l := &Limiter{now: now, buckets: map[bucketKey]*rate.Limiter{}}
	for _, c := range limits {
		callers, _ := glob.CompileList(c.Callers)
		tools, _ := glob.CompileList(c.Tools)
		l.limits = append(l.limits, limit{cfg: c, callers: callers, tools: tools})
	}
	return l
}

// Admit takes one call of caller to tool (model-visible name) from every
// limit that matches it, or none and a *LimitedError when one is spent.
// A nil Limiter admits everything.
func (l *Limiter) Admit(caller *identity.Caller, tool string) error {
	if l == nil {
		return nil
	}
	now := l.now()
	subject := caller.Name()
	l.mu.Lock()
	defer l.mu.Unlock()
	var taken []*rate.Reservation
	for i := range l.limits {
		lim := &l.limits[i]
		if !matches(lim.callers, lim.cfg.Callers, subject) || !matches(lim.tools, lim.cfg.Tools, tool) {
			continue
		}
		b := l.bucket(i, caller, tool, now)
		r := b.ReserveN(now, 1)
		if d := r.DelayFrom(now); !r.OK() || d > 0 {
			r.CancelAt(now)
			for _, t := range taken {
				t.CancelAt(now)
			}
			if d <= 0 {
				d = lim.cfg.Period
			}
			return &LimitedError{Limit: lim.cfg, Caller: subject, Tool: tool, RetryAfter: d, At: now}
		}
		taken = append(taken, r)
	}
	return nil
}

func matches(l glob.List, patterns []string, s string) bool {
	return len(patterns) == 0 || l.Match(s)
}

// bucket returns the token bucket of limit i for this call. Called with
// l.mu held.
func (l *Limiter) bucket(i int, caller *identity.Caller, tool string, now time.Time) *rate.Limiter {
	c := l.limits[i].cfg
	k := bucketKey{limit: i}
	if c.PerCaller {
		k.caller = caller.Key()
	}
	if c.PerTool {
		k.tool = tool
	}
	if b, ok := l.buckets[k]; ok {
		return b
	}
	if len(l.buckets) >= maxBuckets {
		for key, b := range l.buckets {
			if b.TokensAt(now) >= float64(b.Burst()) {
				delete(l.buckets, key)
			}
		}
	}
	b := rate.NewLimiter(rate.Limit(float64(c.Calls)/c.Period.Seconds()), c.Burst)
	l.buckets[k] = b
	return b
}
