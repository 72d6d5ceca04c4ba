package gateway_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
)

// BenchmarkModernCallOverHTTP is one echo call through one in-process
// gateway over Streamable HTTP from two clients in turn: one at
// 2025-11-25 (a stateful session) and one at 2026-07-28 (go-sdk's
// stateless handler, which builds a go-sdk session per request, in front
// of the client's toolgate session). It reports each p50 and their
// ratio, the price of serving 2026-07-28 over HTTP (issue 32). Run:
//
//	go test -run '^$' -bench ModernCallOverHTTP -benchtime 2000x ./host/gateway/
func BenchmarkModernCallOverHTTP(b *testing.B) {
	f := newFixtureWith(b, fixtureOptions{noAuditLog: true}, "")
	srv := f.httpServer(b, config.Serve{}, nil)
	sides := []struct {
		name string
		cs   *mcp.ClientSession
	}{
		{"2025-11-25", f.connectToVersion(b, srv, nil, "2025-11-25")},
		{"2026-07-28", f.connectToVersion(b, srv, nil, "")},
	}
	lat := make([][]time.Duration, len(sides))
	call := func(i int) {
		res, err := sides[i].cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__demo__echo", Arguments: map[string]any{"text": "hello"}})
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %v", sides[i].name, err, res)
		}
	}
	for i := range sides {
		for range 100 { // warm up connections and lazily built paths
			call(i)
		}
	}
	for round := 0; b.Loop(); round++ {
		for i := range inTurn(round, len(sides)) {
			t0 := time.Now()
			call(i)
			lat[i] = append(lat[i], time.Since(t0))
		}
	}
	for i, s := range sides {
		b.ReportMetric(float64(percentile(lat[i], 0.50).Microseconds()), s.name+"-p50-µs")
	}
	b.ReportMetric(float64(percentile(lat[1], 0.5))/float64(percentile(lat[0], 0.5)), "2026-07-28-p50-vs-2025-11-25")
	b.ReportMetric(0, "ns/op")
}
