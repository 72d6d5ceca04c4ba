package events

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
)

func startup(server, status string) ServerStartup {
	return ServerStartup{Server: server, Status: status}
}

func TestBusDeliversToSinksInOrderAndSubscribers(t *testing.T) {
	bus := NewBus(BusOptions{})
	defer bus.Close()

	var order []string
	var first, second Recorder
	bus.AddSink(SinkFunc(func(e Event) { order = append(order, "first"); first.Emit(e) }))
	bus.AddSink(SinkFunc(func(e Event) { order = append(order, "second"); second.Emit(e) }))
	sub := bus.Subscribe(t.Context(), 4)

	sent := []Event{startup("a", StatusStarting), startup("a", StatusReady)}
	for _, e := range sent {
		bus.Emit(e)
	}

	if diff := cmp.Diff(sent, first.Events()); diff != "" {
		t.Errorf("first sink (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(sent, second.Events()); diff != "" {
		t.Errorf("second sink (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"first", "second", "first", "second"}, order); diff != "" {
		t.Errorf("sinks must run in registration order (-want +got):\n%s", diff)
	}
	got := []Event{<-sub, <-sub}
	if diff := cmp.Diff(sent, got); diff != "" {
		t.Errorf("subscriber (-want +got):\n%s", diff)
	}
}

func TestBusFullSubscriberLosesEventsWithoutBlocking(t *testing.T) {
	bus := NewBus(BusOptions{})
	defer bus.Close()
	sub := bus.Subscribe(t.Context(), 2)

	// Nobody reads sub: if Emit blocked, this test would hang.
	for i := range 10 {
		bus.Emit(startup(fmt.Sprint(i), StatusReady))
	}
	if got := bus.Dropped(); got != 8 {
		t.Errorf("Dropped() = %d, want 8", got)
	}
	got := []Event{<-sub, <-sub}
	want := []Event{startup("0", StatusReady), startup("1", StatusReady)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a full subscriber keeps the oldest events (-want +got):\n%s", diff)
	}
}

func TestBusClosesSubscriptionWhenContextEnds(t *testing.T) {
	bus := NewBus(BusOptions{})
	defer bus.Close()
	ctx, cancel := context.WithCancel(t.Context())
	sub := bus.Subscribe(ctx, 8)
	other := bus.Subscribe(t.Context(), 8)

	bus.Emit(startup("before", StatusReady))
	cancel()
	var got []Event
	for e := range sub { // ends only if the bus closes sub
		got = append(got, e)
	}
	if diff := cmp.Diff([]Event{startup("before", StatusReady)}, got); diff != "" {
		t.Errorf("events before cancel (-want +got):\n%s", diff)
	}

	bus.Emit(startup("after", StatusReady))
	if e := <-other; e != (startup("before", StatusReady)) {
		t.Errorf("other subscriber got %v first", e)
	}
	if e := <-other; e != (startup("after", StatusReady)) {
		t.Errorf("cancelling one subscription must not affect another; got %v", e)
	}
}

func TestBusSubscribeWithDoneContext(t *testing.T) {
	bus := NewBus(BusOptions{})
	defer bus.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	sub := bus.Subscribe(ctx, 1)
	for range sub { // must end
	}
}

func TestBusClose(t *testing.T) {
	bus := NewBus(BusOptions{})
	var rec Recorder
	bus.AddSink(&rec)
	sub := bus.Subscribe(t.Context(), 1)

	bus.Close()
	if _, open := <-sub; open {
		t.Error("Close must close subscriber channels")
	}
	bus.Emit(startup("late", StatusReady)) // must not panic
	bus.AddSink(&rec)
	bus.Emit(startup("later", StatusReady))
	if got := rec.Events(); len(got) != 0 {
		t.Errorf("sinks received %v after Close", got)
	}
	if _, open := <-bus.Subscribe(t.Context(), 1); open {
		t.Error("Subscribe after Close must return a closed channel")
	}
	bus.Close() // idempotent
}

func TestBusSurvivesPanickingSink(t *testing.T) {
	var logs bytes.Buffer
	bus := NewBus(BusOptions{Logger: hclog.New(&hclog.LoggerOptions{Output: &logs})})
	defer bus.Close()
	var rec Recorder
	bus.AddSink(SinkFunc(func(Event) { panic("boom") }))
	bus.AddSink(&rec)

	bus.Emit(startup("a", StatusReady))
	if len(rec.Events()) != 1 {
		t.Error("a panicking sink must not stop later sinks")
	}
	if !strings.Contains(logs.String(), "event sink panicked") || !strings.Contains(logs.String(), "boom") {
		t.Errorf("the panic must be logged, got:\n%s", logs.String())
	}
}

func TestBusConcurrentUse(t *testing.T) {
	const emitters, perEmitter = 8, 500
	const total = emitters * perEmitter
	bus := NewBus(BusOptions{})

	var mu sync.Mutex
	sinkCount := 0
	bus.AddSink(SinkFunc(func(Event) { mu.Lock(); sinkCount++; mu.Unlock() }))

	// A subscriber with room for everything must miss nothing.
	full := bus.Subscribe(t.Context(), total)

	var wg sync.WaitGroup
	stopChurn := make(chan struct{})
	for range 4 {
		// Subscribers that come and go while events flow.
		wg.Go(func() {
			for {
				select {
				case <-stopChurn:
					return
				default:
				}
				ctx, cancel := context.WithCancel(t.Context())
				sub := bus.Subscribe(ctx, 1)
				select {
				case <-sub:
				case <-stopChurn:
				}
				cancel()
				for range sub {
				}
			}
		})
	}
	var emitWG sync.WaitGroup
	for i := range emitters {
		emitWG.Go(func() {
			for j := range perEmitter {
				bus.Emit(startup(fmt.Sprintf("%d-%d", i, j), StatusReady))
			}
		})
	}
	emitWG.Wait()
	close(stopChurn)
	wg.Wait()
	bus.Close()

	received := 0
	for range full {
		received++
	}
	if received != total {
		t.Errorf("subscriber with room for all events got %d, want %d", received, total)
	}
	if sinkCount != total {
		t.Errorf("synchronous sink got %d events, want %d", sinkCount, total)
	}
}
