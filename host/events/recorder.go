package events

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// Recorder is a Sink that keeps every event, for tests of other packages:
// assert on what happened instead of scraping logs. The zero value is
// ready to use and it is safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	events []Event
	wake   chan struct{} // closed on the next Emit; nil while nobody waits
}

// Emit records e and wakes every WaitFor.
func (r *Recorder) Emit(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	if r.wake != nil {
		close(r.wake)
		r.wake = nil
	}
}

// Events returns a copy of the events recorded so far, in emission order.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// Of returns the recorded events of type T, in emission order.
func Of[T Event](r *Recorder) []T {
	var out []T
	for _, e := range r.Events() {
		if t, ok := e.(T); ok {
			out = append(out, t)
		}
	}
	return out
}

// WaitFor returns the first recorded event, past or future, for which
// match is true. It wakes on each emission rather than polling. When ctx
// ends first, the error lists the kinds recorded so far, which usually
// shows why the expected event never came.
func (r *Recorder) WaitFor(ctx context.Context, match func(Event) bool) (Event, error) {
	next := 0
	for {
		r.mu.Lock()
		pending := r.events[next:len(r.events):len(r.events)]
		next = len(r.events)
		if r.wake == nil {
			r.wake = make(chan struct{})
		}
		wake := r.wake
		r.mu.Unlock()

		// match runs unlocked so it may itself use the Recorder.
		for _, e := range pending {
			if match(e) {
				return e, nil
			}
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for event: %w (recorded: %s)", ctx.Err(), r.kinds())
		}
	}
}

func (r *Recorder) kinds() string {
	events := r.Events()
	if len(events) == 0 {
		return "nothing"
	}
	kinds := make([]string, len(events))
	for i, e := range events {
		kinds[i] = e.Kind()
	}
	return strings.Join(kinds, ", ")
}
