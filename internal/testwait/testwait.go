package testwait

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// DefaultBound is how long a wait lasts unless TOOLGATE_TEST_WAIT says
// otherwise: long enough for a server to start under -race on a loaded
// two-core machine, far shorter than the 20-minute test timeout.
const DefaultBound = 60 * time.Second

// EnvBound names the variable that overrides DefaultBound (a Go duration,
// e.g. "3m").
const EnvBound = "TOOLGATE_TEST_WAIT"

// Bound is how long Recv, RecvOK and Context wait.
func Bound() time.Duration {
	if d, err := time.ParseDuration(os.Getenv(EnvBound)); err == nil && d > 0 {
		return d
	}
	return DefaultBound
}

// Recv returns the next value from ch. When none arrives within Bound it
// fails t with "timed out after <bound> waiting for <what>", what being
// format and args (evaluated before the wait).
func Recv[T any](t testing.TB, ch <-chan T, format string, args ...any) T {
	t.Helper()
	v, _ := recv(t, ch, Bound(), format, args...)
	return v
}

// RecvOK is Recv for a channel that may be closed: ok is false when it
// was.
func RecvOK[T any](t testing.TB, ch <-chan T, format string, args ...any) (v T, ok bool) {
	t.Helper()
	return recv(t, ch, Bound(), format, args...)
}

func recv[T any](t testing.TB, ch <-chan T, bound time.Duration, format string, args ...any) (T, bool) {
	t.Helper()
	timer := time.NewTimer(bound)
	defer timer.Stop()
	select {
	case v, ok := <-ch:
		return v, ok
	case <-timer.C:
		t.Fatalf("timed out after %v waiting for %s", bound, fmt.Sprintf(format, args...))
		var zero T
		return zero, false // t.Fatalf does not return with a real *testing.T
	}
}

// Context returns a context that ends after Bound, or when the test ends.
// Use it where a wait is on a context rather than a channel; the caller
// names what it waited for when the context ends.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Bound())
	t.Cleanup(cancel)
	return ctx
}
