package testwait

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// fakeT records a failure and ends its goroutine, as testing.T does.
type fakeT struct {
	testing.TB
	failed string
}

func (*fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls fn in a goroutine of its own (Fatalf ends it) and reports
// what the fake test recorded.
func run(fn func(f *fakeT)) string {
	f := &fakeT{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f.failed
}

func TestRecvFailsNamingWhatItAwaited(t *testing.T) {
	never := make(chan int)
	msg := run(func(f *fakeT) {
		recv(f, never, 10*time.Millisecond, "the %s of server %q", "first list", "slow")
		f.failed = "recv returned without failing"
	})
	want := `timed out after 10ms waiting for the first list of server "slow"`
	if msg != want {
		t.Errorf("failure = %q, want %q", msg, want)
	}
}

func TestRecvReturnsTheValue(t *testing.T) {
	ch := make(chan string, 1)
	ch <- "ready"
	msg := run(func(f *fakeT) {
		if v := Recv(f, ch, "a value"); v != "ready" {
			f.failed = "got " + v
		}
	})
	if msg != "" {
		t.Error(msg)
	}
	close(ch)
	msg = run(func(f *fakeT) {
		if _, ok := RecvOK(f, ch, "a value"); ok {
			f.failed = "ok on a closed channel"
		}
	})
	if msg != "" {
		t.Error(msg)
	}
}

func TestBoundFromEnvironment(t *testing.T) {
	t.Setenv(EnvBound, "3m")
	if Bound() != 3*time.Minute {
		t.Errorf("Bound() = %v with %s=3m", Bound(), EnvBound)
	}
	t.Setenv(EnvBound, "soon")
	if Bound() != DefaultBound {
		t.Errorf("Bound() = %v with an unparsable %s, want the default", Bound(), EnvBound)
	}
}
