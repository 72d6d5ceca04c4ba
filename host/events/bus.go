package events

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
)

// BusOptions configures a Bus.
type BusOptions struct {
	// Logger receives panics of synchronous sinks. nil discards them.
	Logger hclog.Logger
}

// Bus delivers every emitted event to its synchronous sinks, in
// registration order, and then to its subscribers. It is itself a Sink, so
// producers only ever see a Sink.
type Bus struct {
	log     hclog.Logger
	dropped atomic.Uint64
	wg      sync.WaitGroup // one count per subscription whose ctx watcher may still run

	// mu guards the fields below. Emit holds it for reading while it sends
	// to subscribers, and channels are closed only under the write lock, so
	// a send can never hit a closed channel.
	mu     sync.RWMutex
	sinks  []Sink // replaced, never mutated in place, so Emit can call them unlocked
	subs   map[*subscription]struct{}
	closed bool
}

type subscription struct {
	ch   chan Event
	stop func() bool // unregisters the ctx watcher
}

// NewBus returns an empty bus. Call Close to release its subscribers.
func NewBus(opts BusOptions) *Bus {
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Bus{log: log.Named("events"), subs: make(map[*subscription]struct{})}
}

// AddSink registers a synchronous sink. Emit calls it inline, so it must be
// fast; it receives every event emitted after AddSink returns. Adding to a
// closed bus does nothing.
func (b *Bus) AddSink(s Sink) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.sinks = append(append([]Sink(nil), b.sinks...), s)
}

// Subscribe returns a channel of the events emitted from now on until ctx
// is done or the bus is closed; then the bus closes the channel. buf is how
// many events the subscriber may fall behind before it loses events
// (counted in Dropped); values below 1 mean 1. Emit never waits for a
// subscriber.
func (b *Bus) Subscribe(ctx context.Context, buf int) <-chan Event {
	ch := make(chan Event, max(buf, 1))
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		close(ch)
		return ch
	}
	s := &subscription{ch: ch}
	b.subs[s] = struct{}{}
	b.wg.Add(1)
	// AfterFunc starts no goroutine until ctx is done; when it runs, it
	// waits for this lock, so s.stop is set before anyone can read it.
	s.stop = context.AfterFunc(ctx, func() {
		defer b.wg.Done()
		b.unsubscribe(s)
	})
	return ch
}

func (b *Bus) unsubscribe(s *subscription) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.subs[s]; ok {
		delete(b.subs, s)
		close(s.ch)
	}
}

// Emit delivers e to every sink and subscriber. It never blocks on a
// subscriber; a panicking sink is logged and skipped so that one bad sink
// cannot fail the call that emitted the event. After Close it does
// nothing.
func (b *Bus) Emit(e Event) {
	b.mu.RLock()
	sinks := b.sinks
	b.mu.RUnlock()
	for _, s := range sinks {
		b.emitTo(s, e)
	}

	b.mu.RLock()
	defer b.mu.RUnlock()
	for s := range b.subs {
		select {
		case s.ch <- e:
		default:
			b.dropped.Add(1)
		}
	}
}

func (b *Bus) emitTo(s Sink, e Event) {
	defer func() {
		if r := recover(); r != nil {
			b.log.Error("event sink panicked", "event", e.Kind(), "panic", r)
		}
	}()
	s.Emit(e)
}

// Dropped is the number of events subscribers lost because their buffer
// was full.
func (b *Bus) Dropped() uint64 { return b.dropped.Load() }

// Close closes every subscriber channel and detaches all sinks; later
// Emits do nothing. It does not close the sinks themselves: whoever opened
// an AuditSink closes it. Close waits for the bus's own goroutines and is
// idempotent.
func (b *Bus) Close() {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		b.sinks = nil
		for s := range b.subs {
			if s.stop() {
				b.wg.Done() // the watcher will never run
			}
			delete(b.subs, s)
			close(s.ch)
		}
	}
	b.mu.Unlock()
	b.wg.Wait()
}
