package events

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRecorderOf(t *testing.T) {
	var r Recorder
	r.Emit(startup("a", StatusStarting))
	r.Emit(PluginState{Plugin: "p", Status: PluginStarted})
	r.Emit(startup("a", StatusReady))

	want := []ServerStartup{startup("a", StatusStarting), startup("a", StatusReady)}
	if diff := cmp.Diff(want, Of[ServerStartup](&r)); diff != "" {
		t.Errorf("Of[ServerStartup] (-want +got):\n%s", diff)
	}
	if got := Of[ToolCallEnd](&r); len(got) != 0 {
		t.Errorf("Of[ToolCallEnd] = %v, want none", got)
	}
	if got := len(r.Events()); got != 3 {
		t.Errorf("Events() has %d events, want 3", got)
	}
}

func TestRecorderWaitForPastEvent(t *testing.T) {
	var r Recorder
	r.Emit(startup("a", StatusReady))
	got, err := r.WaitFor(t.Context(), func(e Event) bool { return e.Kind() == "server_startup" })
	if err != nil || got != (startup("a", StatusReady)) {
		t.Fatalf("WaitFor = %v, %v; want the recorded event", got, err)
	}
}

func TestRecorderWaitForWakesOnEmission(t *testing.T) {
	var r Recorder
	isReady := func(e Event) bool {
		s, ok := e.(ServerStartup)
		return ok && s.Status == StatusReady
	}
	type result struct {
		e   Event
		err error
	}
	done := make(chan result, 1)
	go func() {
		e, err := r.WaitFor(t.Context(), isReady)
		done <- result{e, err}
	}()
	r.Emit(startup("b", StatusStarting)) // not a match: WaitFor keeps waiting
	r.Emit(startup("b", StatusReady))
	res := <-done
	if res.err != nil || res.e != (startup("b", StatusReady)) {
		t.Fatalf("WaitFor = %v, %v; want b ready", res.e, res.err)
	}
}

func TestRecorderWaitForGivesUpWithContext(t *testing.T) {
	var r Recorder
	r.Emit(startup("a", StatusStarting))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := r.WaitFor(ctx, func(Event) bool { return false })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitFor error = %v, want context.Canceled", err)
	}
	if !strings.Contains(err.Error(), "server_startup") {
		t.Errorf("the error should list what was recorded: %v", err)
	}
}

func TestRecorderMatchMayUseRecorder(t *testing.T) {
	var r Recorder
	r.Emit(startup("a", StatusReady))
	// A match function that reads the recorder must not deadlock.
	_, err := r.WaitFor(t.Context(), func(Event) bool { return len(r.Events()) == 1 })
	if err != nil {
		t.Fatal(err)
	}
}
