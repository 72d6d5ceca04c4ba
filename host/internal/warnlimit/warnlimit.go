package warnlimit

import (
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Defaults of a Limiter's budget: per kind of warning, Burst lines in
// each Window are logged, the rest counted.
const (
	DefaultBurst  = 5
	DefaultWindow = 10 * time.Second
	// maxKinds bounds the kinds tracked at once; past it, new kinds share
	// one budget, so warnings that embed peer-chosen text in their key
	// cannot grow the table without bound.
	maxKinds = 256
)

// Options tunes a Limiter. The zero value uses the defaults.
type Options struct {
	Burst  int
	Window time.Duration
}

// Limiter rate-limits warnings by kind. A kind is the message text
// together with the value of its "server" argument, when given, so one
// flooding server cannot hide another server's warnings. The first
// Burst warnings of a kind in a window are logged as given; the rest are
// counted and, when the window ends, logged as one line: the message,
// its last arguments, and "suppressed" with the count.
//
// It is safe for concurrent use. Close logs the pending summaries and
// stops its timers; the owner calls it when it closes. Warnings after
// Close are logged without a limit.
type Limiter struct {
	burst  int
	window time.Duration

	mu     sync.Mutex
	kinds  map[kind]*budget
	closed bool
}

type kind struct {
	msg, server string
}

// budget is one kind's current window.
type budget struct {
	logged     int
	suppressed int
	// last is what the summary is logged with: the logger, level and
	// arguments of the last suppressed warning.
	log   hclog.Logger
	level hclog.Level
	args  []any
	timer *time.Timer
}

// New returns a Limiter with opts' budget.
func New(opts Options) *Limiter {
	if opts.Burst <= 0 {
		opts.Burst = DefaultBurst
	}
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	return &Limiter{burst: opts.Burst, window: opts.Window, kinds: map[kind]*budget{}}
}

// Warn logs msg with args on log at warning level, within the budget of
// its kind.
func (l *Limiter) Warn(log hclog.Logger, msg string, args ...any) {
	l.Log(log, hclog.Warn, msg, args...)
}

// Log is Warn at another level.
func (l *Limiter) Log(log hclog.Logger, level hclog.Level, msg string, args ...any) {
	if log == nil {
		return
	}
	if l == nil {
		log.Log(level, msg, args...)
		return
	}
	k := kind{msg: msg, server: serverOf(args)}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		log.Log(level, msg, args...)
		return
	}
	b := l.kinds[k]
	if b == nil {
		if len(l.kinds) >= maxKinds {
			k = kind{msg: "(other warnings)"}
			b = l.kinds[k]
		}
		if b == nil {
			b = &budget{}
			l.kinds[k] = b
			b.timer = time.AfterFunc(l.window, func() { l.endWindow(k) })
		}
	}
	if b.logged < l.burst {
		b.logged++
		l.mu.Unlock()
		log.Log(level, msg, args...)
		return
	}
	b.suppressed++
	b.log, b.level, b.args = log, level, args
	l.mu.Unlock()
}

// endWindow logs k's summary, if it suppressed anything, and forgets k:
// its next warning starts a new window.
func (l *Limiter) endWindow(k kind) {
	l.mu.Lock()
	b := l.kinds[k]
	if l.closed || b == nil {
		l.mu.Unlock()
		return
	}
	delete(l.kinds, k)
	l.mu.Unlock()
	l.summarize(k, b)
}

func (l *Limiter) summarize(k kind, b *budget) {
	if b.suppressed == 0 {
		return
	}
	msg := k.msg
	if k.server == "" && msg == "(other warnings)" {
		msg = "more kinds of warnings than tracked"
	}
	args := append(append([]any{}, b.args...), "suppressed", b.suppressed)
	b.log.Log(b.level, fmt.Sprintf("%s (and %d more like it in %s, not logged one by one)", msg, b.suppressed, l.window), args...)
}

// Close logs every pending summary and stops the timers. Idempotent.
func (l *Limiter) Close() {
	if l == nil {
		return
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	pending := l.kinds
	l.kinds = nil
	l.mu.Unlock()
	for k, b := range pending {
		b.timer.Stop()
		l.summarize(k, b)
	}
}

// serverOf returns the value of a "server" argument, if any.
func serverOf(args []any) string {
	for i := 0; i+1 < len(args); i += 2 {
		if name, ok := args[i].(string); ok && name == "server" {
			return fmt.Sprint(args[i+1])
		}
	}
	return ""
}
