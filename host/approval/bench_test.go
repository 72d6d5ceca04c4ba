package approval

import (
	"context"
	"fmt"
	"testing"

	"github.com/toolgate/toolgate/host/events"
)

// BenchmarkDecide measures the paths most calls take: decided by the
// annotations, and approved from session memory.
func BenchmarkDecide(b *testing.B) {
	b.Run("annotations", func(b *testing.B) {
		p := New(Options{Approval: onRequest, Server: servers(""), Events: events.SinkFunc(func(events.Event) {})})
		r := request("s1", "read_file")
		r.Annotations = readOnly
		for b.Loop() {
			if !p.Decide(context.Background(), r).Approved {
				b.Fatal("denied")
			}
		}
	})
	b.Run("session-memory", func(b *testing.B) {
		p := New(Options{Approval: onRequest, Server: servers(""), Events: events.SinkFunc(func(events.Event) {})})
		for i := range 1000 {
			p.memory.rememberSession(fmt.Sprintf("s%d", i), "files", "write_file", "")
		}
		r := request("s500", "write_file")
		for b.Loop() {
			if !p.Decide(context.Background(), r).Approved {
				b.Fatal("denied")
			}
		}
	})
}
