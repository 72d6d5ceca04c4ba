package warnlimit

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Split(strings.TrimSpace(l.b.String()), "\n")
}

func newLog() (hclog.Logger, *lockedBuffer) {
	buf := &lockedBuffer{}
	return hclog.New(&hclog.LoggerOptions{Output: buf, Level: hclog.Debug, DisableTime: true}), buf
}

// A flood of one warning logs the burst, then one summary per window
// carrying the count of the rest; nothing is dropped uncounted.
func TestFloodIsSummarized(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log, buf := newLog()
		l := New(Options{Burst: 3, Window: 10 * time.Second})
		defer l.Close()
		for range 1000 {
			l.Warn(log, "refused a request", "server", "a", "method", "sampling/createMessage")
		}
		if got := len(buf.lines()); got != 3 {
			t.Fatalf("%d lines during the window, want the burst of 3:\n%s", got, strings.Join(buf.lines(), "\n"))
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		lines := buf.lines()
		if len(lines) != 4 || !strings.Contains(lines[3], "suppressed=997") ||
			!strings.Contains(lines[3], "and 997 more like it in 10s") || !strings.Contains(lines[3], "method=sampling/createMessage") {
			t.Fatalf("after the window: %q, want one summary counting 997", lines)
		}
		// A new window starts with a new burst.
		l.Warn(log, "refused a request", "server", "a")
		if got := len(buf.lines()); got != 5 {
			t.Fatalf("%d lines, want the next window's first warning logged", got)
		}
	})
}

// One server's flood does not use up another server's budget, and
// different messages have budgets of their own.
func TestKindsHaveBudgetsOfTheirOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log, buf := newLog()
		l := New(Options{Burst: 1})
		defer l.Close()
		for range 50 {
			l.Warn(log, "refused", "server", "a")
		}
		l.Warn(log, "refused", "server", "b")
		l.Warn(log, "another thing", "server", "a")
		lines := buf.lines()
		if len(lines) != 3 || !strings.Contains(lines[1], "server=b") || !strings.Contains(lines[2], "another thing") {
			t.Fatalf("lines = %q, want a's first, b's first and the other message", lines)
		}
	})
}

// Close logs what is pending, so a flood just before shutdown is still
// counted, and later warnings pass unlimited.
func TestCloseLogsPendingSummaries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log, buf := newLog()
		l := New(Options{Burst: 1})
		for range 5 {
			l.Log(log, hclog.Error, "bad", "server", "a")
		}
		l.Close()
		lines := buf.lines()
		if len(lines) != 2 || !strings.Contains(lines[1], "[ERROR]") || !strings.Contains(lines[1], "suppressed=4") {
			t.Fatalf("lines = %q, want the first and a summary of 4 at the same level", lines)
		}
		l.Warn(log, "bad", "server", "a")
		l.Warn(log, "bad", "server", "a")
		if got := len(buf.lines()); got != 4 {
			t.Fatalf("%d lines after Close, want every warning logged", got)
		}
	})
}

// Warnings whose kinds keep changing share one budget past maxKinds.
func TestKindsAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log, buf := newLog()
		l := New(Options{Burst: 1})
		for i := range 10 * maxKinds {
			l.Warn(log, "bad", "server", i)
		}
		if got := len(buf.lines()); got != maxKinds+1 {
			t.Fatalf("%d lines, want %d (one per tracked kind, then the shared budget's one)", got, maxKinds+1)
		}
		l.Close()
		if last := buf.lines()[maxKinds+1]; !strings.Contains(last, "suppressed=") {
			t.Fatalf("last line %q, want the shared budget's summary", last)
		}
	})
}
