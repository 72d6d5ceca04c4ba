package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/testplugins/sdkfloor"
)

// allocMarginOverFloor is how many more allocations per call than the
// go-sdk floor toolgate's gateway may make (issue 30): what approval,
// the step's routing, events and the upstream session cost, and no
// more. BenchmarkInProcessCall fails beyond it, so make bench catches a
// regression on the hot path.
const allocMarginOverFloor = 40

// goroutineMarginOverFloor is how many more goroutines per call than the
// go-sdk floor toolgate's gateway may start: none of its own for a plain
// call (it runs on go-sdk's request goroutine and starts its forwarder
// only for progress, log messages or input requests). The half leaves
// room for a stray background goroutine (a timer firing, the runtime's
// own), never for one per call.
const goroutineMarginOverFloor = 0.5

// BenchmarkInProcessCall is one echo call through the gateway served in
// this process (Streamable HTTP in, stdio mcp-demo out, approval chain
// on), so that -cpuprofile and -memprofile see the gateway's own work per
// call beside the client's; the process benchmarks cannot be profiled
// from here. Read its profile with -focus on the gateway, host and go-sdk
// server packages.
//
// The sides run in one loop, a call each in turn: sdk-floor (go-sdk's
// server and client and nothing else, package sdkfloor), toolgate
// without and with an audit log. Each reports allocations and bytes per
// call and goroutines started per call (the same client on every side,
// so the differences are the gateways'), and toolgate's allocations over
// the floor's. Run:
//
//	go test -run '^$' -bench InProcessCall -benchtime 2000x ./host/gateway/
func BenchmarkInProcessCall(b *testing.B) {
	type side struct {
		name string
		cs   *mcp.ClientSession
		tool string

		mallocs, bytes, goroutines uint64
	}
	floor := startInProcessFloor(b)
	sides := []*side{{name: "floor", cs: floor, tool: "echo"}}
	for _, s := range []struct {
		name    string
		noAudit bool
	}{{"toolgate", true}, {"toolgate+audit", false}} {
		f := newFixtureWith(b, fixtureOptions{noAuditLog: s.noAudit}, "")
		sides = append(sides, &side{name: s.name, cs: f.connectTo(b, f.httpServer(b, config.Serve{}, nil), nil), tool: "mcp__demo__echo"})
	}
	call := func(s *side) {
		res, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: s.tool, Arguments: map[string]any{"text": "hello"}})
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %v", s.name, err, res)
		}
	}
	for _, s := range sides {
		for range 100 { // warm up pools, caches and lazily built paths
			call(s)
		}
	}
	var before, after runtime.MemStats
	created := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	goroutinesCreated := func() uint64 {
		metrics.Read(created)
		return created[0].Value.Uint64()
	}
	n := 0
	for b.Loop() {
		for _, s := range sides {
			g0 := goroutinesCreated()
			runtime.ReadMemStats(&before)
			call(s)
			runtime.ReadMemStats(&after)
			s.goroutines += goroutinesCreated() - g0
			s.mallocs += after.Mallocs - before.Mallocs
			s.bytes += after.TotalAlloc - before.TotalAlloc
		}
		n++
	}
	per := func(v uint64) float64 { return float64(v) / float64(n) }
	for _, s := range sides {
		b.ReportMetric(per(s.mallocs), s.name+"-allocs/call")
		b.ReportMetric(per(s.bytes), s.name+"-B/call")
		b.ReportMetric(per(s.goroutines), s.name+"-goroutines/call")
	}
	over := per(sides[1].mallocs) - per(sides[0].mallocs)
	b.ReportMetric(over, "toolgate-allocs-over-floor")
	b.ReportMetric(per(sides[1].bytes)/per(sides[0].bytes), "toolgate-bytes-vs-floor")
	if extra := per(sides[1].goroutines) - per(sides[0].goroutines); extra > goroutineMarginOverFloor {
		b.Errorf("toolgate starts %.2f more goroutines per call than the go-sdk floor (%.2f vs %.2f); a plain call must start none of its own",
			extra, per(sides[1].goroutines), per(sides[0].goroutines))
	}
	if over > allocMarginOverFloor {
		b.Errorf("toolgate allocates %.0f more per call than the go-sdk floor (%.0f vs %.0f); the margin is %d (allocMarginOverFloor)",
			over, per(sides[1].mallocs), per(sides[0].mallocs), allocMarginOverFloor)
	}
}

// startInProcessFloor serves package sdkfloor in this process over a real
// HTTP listener and connects a client to it.
func startInProcessFloor(b *testing.B) *mcp.ClientSession {
	b.Helper()
	f, err := sdkfloor.Start(b.Context(), []string{testbin.Path(b, "mcp-demo"), "--name", "demo"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = f.Close() })
	srv := httptest.NewServer(f.Handler())
	b.Cleanup(srv.Close)
	tr := &http.Transport{}
	b.Cleanup(tr.CloseIdleConnections)
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := c.Connect(b.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: tr}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	return cs
}
