package terminal

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// screen is the terminal's output: it records everything written and
// wakes waiters on each write, so tests wait for a prompt instead of
// sleeping.
type screen struct {
	mu   sync.Mutex
	text strings.Builder
	seen int           // waitFor consumed output up to here
	wake chan struct{} // closed on the next write
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.text.Write(p)
	if s.wake != nil {
		close(s.wake)
		s.wake = nil
	}
	return len(p), nil
}

func (s *screen) all() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text.String()
}

// waitFor waits until the output not yet consumed contains want, and
// returns that output up to and including want.
func (s *screen) waitFor(t *testing.T, want string) string {
	t.Helper()
	// A bound so a broken test fails instead of hanging; not a timing
	// assertion.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		s.mu.Lock()
		rest := s.text.String()[s.seen:]
		if i := strings.Index(rest, want); i >= 0 {
			s.seen += i + len(want)
			s.mu.Unlock()
			return rest[:i+len(want)]
		}
		if s.wake == nil {
			s.wake = make(chan struct{})
		}
		wake := s.wake
		s.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			t.Fatalf("output never showed %q; got:\n%s", want, s.all())
		}
	}
}

// rig is a Terminal driven through an io.Pipe.
type rig struct {
	term   *Terminal
	screen *screen
	input  *io.PipeWriter
}

func newRig(t *testing.T, opts Options) *rig {
	t.Helper()
	pr, pw := io.Pipe()
	r := &rig{screen: &screen{}, input: pw}
	r.term = New(pr, r.screen, opts)
	t.Cleanup(func() {
		_ = pw.Close()
		_ = r.term.Close()
	})
	return r
}

// answer types a line. io.Pipe makes it return once the reader took it.
func (r *rig) answer(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(r.input, line+"\n"); err != nil {
		t.Fatalf("type %q: %v", line, err)
	}
}

// async runs f in a goroutine and returns a channel with its result.
func async[T any](f func() (T, error)) <-chan result[T] {
	ch := make(chan result[T], 1)
	go func() {
		v, err := f()
		ch <- result[T]{v, err}
	}()
	return ch
}

type result[T any] struct {
	v   T
	err error
}

func await[T any](t *testing.T, ch <-chan result[T]) (T, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		t.Fatal("the question never returned")
		panic("unreachable")
	}
}
