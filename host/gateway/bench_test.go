package gateway_test

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testbin"
)

// The benchmarks compare, in the same run, a go-sdk client calling
// mcp-demo's echo through `toolgate serve --http` (mcp-demo behind it
// over stdio) with the same client calling `mcp-demo --http` directly.
// Two yardsticks run in the same run: bare-gateway forwards the same
// calls to the same stdio mcp-demo with plain JSON and no go-sdk (its
// ratios, bare-p50-ratio and bare-throughput-ratio, are what any gateway
// could reach on the machine at hand), and sdk-floor does the same with
// go-sdk's Streamable HTTP server and client, nothing else (sdkfloor-*:
// the floor of any gateway built on go-sdk, the one toolgate is judged
// against; issue 30). Besides wall time they report the CPU time each
// side's processes spend per call, which a busy machine disturbs far
// less than latency.

// benchTarget is one side of the comparison, run as real processes.
type benchTarget struct {
	name string
	url  string
	tool string
	pid  int // the process the client talks to
}

// cpu is the CPU time used so far by the target's process (own) and by
// it with its descendants (total: toolgate's mcp-demo).
func (bt benchTarget) cpu() (own, total time.Duration) {
	own = procwatch.CPUTime(bt.pid)
	total = own
	for _, pid := range descendants(bt.pid) {
		total += procwatch.CPUTime(pid)
	}
	return own, total
}

func startTarget(b testing.TB, name, tool string, argv []string) benchTarget {
	b.Helper()
	cmd := procwatch.DieWithTest(exec.Command(argv[0], argv[1:]...))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	url, err := procwatch.WaitLine(ctx, stderr, regexp.MustCompile(`(http://127\.0\.0\.1:\d+/mcp)`))
	if err != nil {
		b.Fatalf("%s did not start: %v", name, err)
	}
	return benchTarget{name: name, url: url, tool: tool, pid: cmd.Process.Pid}
}

// Indexes of the sides benchTargets starts: ratios are against direct
// and, for toolgate's sides, against bare and floor too. toolgate runs
// its approval chain on every call (echo is auto-approved).
const (
	sideDirect   = iota // the client → mcp-demo --http
	sideBare            // bare-gateway → stdio mcp-demo
	sideFloor           // sdk-floor → stdio mcp-demo
	sideToolgate        // toolgate serve --http → stdio mcp-demo; then toolgate with an audit log (benchAll only)
)

// benchTargets starts the sides, in the order of the side constants.
func benchTargets(b testing.TB) []benchTarget { return startBenchTargets(b, false) }

// benchAll is benchTargets with the audit-log side.
func benchAll(b testing.TB) []benchTarget { return startBenchTargets(b, true) }

func startBenchTargets(b testing.TB, audit bool) []benchTarget {
	b.Helper()
	demo := testbin.Path(b, "mcp-demo")
	direct := startTarget(b, "direct", "echo", []string{demo, "--http", "127.0.0.1:0", "--name", "demo"})
	bare := startTarget(b, "bare", "echo", []string{testbin.Path(b, "bare-gateway"), "--http", "127.0.0.1:0", "--", demo, "--name", "demo"})
	floor := startTarget(b, "sdkfloor", "echo", []string{testbin.Path(b, "sdk-floor"), "--http", "127.0.0.1:0", "--", demo, "--name", "demo"})
	dir := b.TempDir()
	src := fmt.Sprintf("server \"demo\" {\n  command = %q\n  args = [\"--name\", \"demo\"]\n}\n", demo)
	gateway := func(name, top string) benchTarget {
		cfg := filepath.Join(dir, name+".hcl")
		if err := os.WriteFile(cfg, []byte(top+src), 0o644); err != nil {
			b.Fatal(err)
		}
		bt := startTarget(b, name, "mcp__demo__echo", []string{testbin.Path(b, "toolgate"), "serve", "--http", "127.0.0.1:0", "--config", cfg})
		bt.waitServed(b)
		return bt
	}
	out := []benchTarget{direct, bare, floor, gateway("gateway", "")}
	if audit {
		out = append(out, gateway("gateway+audit", fmt.Sprintf("audit_log = %q\n", filepath.Join(dir, "audit.jsonl"))))
	}
	return out
}

func (bt benchTarget) connect(b testing.TB) *mcp.ClientSession {
	b.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	b.Cleanup(tr.CloseIdleConnections)
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: bt.url, HTTPClient: &http.Client{Transport: tr}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatalf("connecting to %s: %v", bt.name, err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	return cs
}

// waitServed returns once a toolgate target lists its tool: serve
// answers before its servers are ready, and adds their tools (with
// notifications/tools/list_changed) as they arrive.
func (bt benchTarget) waitServed(b testing.TB) {
	b.Helper()
	changed := make(chan struct{}, 16)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench-ready", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: bt.url, HTTPClient: &http.Client{Transport: tr}}, nil)
	if err != nil {
		b.Fatalf("connecting to %s: %v", bt.name, err)
	}
	defer cs.Close()
	for {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			b.Fatalf("listing %s's tools: %v", bt.name, err)
		}
		if slices.ContainsFunc(res.Tools, func(t *mcp.Tool) bool { return t.Name == bt.tool }) {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			b.Fatalf("%s never listed %s", bt.name, bt.tool)
		}
	}
}

func (bt benchTarget) call(b testing.TB, cs *mcp.ClientSession) *mcp.CallToolResult {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: bt.tool, Arguments: map[string]any{"text": "hello"}})
	if err != nil || res.IsError {
		b.Errorf("%s: %v %v", bt.name, err, res)
	}
	return res
}

// TestBenchTargetsAgree keeps the benchmarks honest where CI can see it:
// the sides they time start, and answer the call they time with
// the same result.
func TestBenchTargetsAgree(t *testing.T) {
	targets := benchTargets(t)
	want := targets[0].call(t, targets[0].connect(t))
	for _, bt := range targets[1:] {
		got := bt.call(t, bt.connect(t))
		if diff := cmp.Diff(wire(t, want), wire(t, got)); diff != "" {
			t.Errorf("%s answers differently from mcp-demo itself (-direct +%s):\n%s", bt.name, bt.name, diff)
		}
	}
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// inTurn yields the indexes of n sides for one round of a benchmark,
// starting at side round mod n. A fixed order would always run one side
// right after another, while the other's processes still finish its call
// (the answer's last write, a GC cycle) on the same cores, and bias it.
func inTurn(round, n int) iter.Seq[int] {
	return func(yield func(int) bool) {
		for k := range n {
			if !yield((k + round) % n) {
				return
			}
		}
	}
}

// BenchmarkCallLatency calls echo on each side in turn, one call at a
// time, and reports medians, tails and server CPU per call.
func BenchmarkCallLatency(b *testing.B) {
	targets := benchAll(b)
	sessions := make([]*mcp.ClientSession, len(targets))
	lat := make([][]time.Duration, len(targets))
	cpu := make([]time.Duration, len(targets))
	own := make([]time.Duration, len(targets))
	for i, bt := range targets {
		sessions[i] = bt.connect(b)
		for range 200 { // warm up connections and lazily built paths
			bt.call(b, sessions[i])
		}
		o, t := bt.cpu()
		own[i], cpu[i] = -o, -t
	}
	for round := 0; b.Loop(); round++ {
		for i := range inTurn(round, len(targets)) {
			t0 := time.Now()
			targets[i].call(b, sessions[i])
			lat[i] = append(lat[i], time.Since(t0))
		}
	}
	for i, bt := range targets {
		o, t := bt.cpu()
		own[i] += o
		cpu[i] += t
		if own[i] != cpu[i] { // a gateway: its own share, without mcp-demo's
			b.ReportMetric(float64(own[i].Microseconds())/float64(len(lat[i])), bt.name+"-own-cpu-µs/call")
		}
		b.ReportMetric(float64(percentile(lat[i], 0.50).Microseconds()), bt.name+"-p50-µs")
		b.ReportMetric(float64(percentile(lat[i], 0.99).Microseconds()), bt.name+"-p99-µs")
		b.ReportMetric(float64(cpu[i].Microseconds())/float64(len(lat[i])), bt.name+"-cpu-µs/call")
	}
	p50 := func(i int) float64 { return float64(percentile(lat[i], 0.5)) }
	b.ReportMetric(p50(sideBare)/p50(sideDirect), "bare-p50-ratio")
	b.ReportMetric(p50(sideFloor)/p50(sideDirect), "sdkfloor-p50-ratio")
	b.ReportMetric(p50(sideToolgate)/p50(sideDirect), "p50-ratio")
	// Issue 30's targets are against the go-sdk floor, issue 19's
	// against bare-gateway, each in the same run.
	for i := sideToolgate; i < len(targets); i++ {
		b.ReportMetric(p50(i)/p50(sideFloor), targets[i].name+"-p50-vs-floor")
		b.ReportMetric(float64(own[i])/float64(own[sideFloor]), targets[i].name+"-own-cpu-vs-floor")
		b.ReportMetric(p50(i)/p50(sideBare), targets[i].name+"-p50-vs-bare")
		b.ReportMetric(float64(own[i])/float64(own[sideBare]), targets[i].name+"-own-cpu-vs-bare")
	}
	b.ReportMetric(0, "ns/op")
}

// BenchmarkColdCall is the first call of a new client on each side in
// turn: a new connection, the session's initialize and initialized, and
// one echo call, timed together (closing the session is not). It reports
// each side's p50 and its ratio to the go-sdk floor's (issue 30: toolgate
// builds a server and a step per session, which warm calls never see).
func BenchmarkColdCall(b *testing.B) {
	targets := benchAll(b)
	lat := make([][]time.Duration, len(targets))
	cold := func(bt benchTarget) time.Duration {
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		c := mcp.NewClient(&mcp.Implementation{Name: "bench-cold", Version: "1"}, nil)
		t0 := time.Now()
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: bt.url, HTTPClient: &http.Client{Transport: tr}},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatalf("connecting to %s: %v", bt.name, err)
		}
		bt.call(b, cs)
		d := time.Since(t0)
		_ = cs.Close()
		return d
	}
	own := make([]time.Duration, len(targets))
	for i, bt := range targets {
		for range 20 { // warm up the processes' lazily built paths
			cold(bt)
		}
		o, _ := bt.cpu()
		own[i] = -o
	}
	for round := 0; b.Loop(); round++ {
		for i := range inTurn(round, len(targets)) {
			lat[i] = append(lat[i], cold(targets[i]))
		}
	}
	p50 := func(i int) float64 { return float64(percentile(lat[i], 0.5)) }
	for i, bt := range targets {
		o, t := bt.cpu()
		own[i] += o
		b.ReportMetric(p50(i)/float64(time.Microsecond), bt.name+"-cold-p50-µs")
		if o != t { // a gateway: its own CPU per new session and call
			b.ReportMetric(float64(own[i].Microseconds())/float64(len(lat[i])), bt.name+"-cold-own-cpu-µs")
		}
	}
	b.ReportMetric(p50(sideBare)/p50(sideDirect), "bare-cold-p50-ratio")
	b.ReportMetric(p50(sideFloor)/p50(sideDirect), "sdkfloor-cold-p50-ratio")
	b.ReportMetric(p50(sideToolgate)/p50(sideDirect), "cold-p50-ratio")
	for i := sideToolgate; i < len(targets); i++ {
		b.ReportMetric(p50(i)/p50(sideFloor), targets[i].name+"-cold-p50-vs-floor")
		b.ReportMetric(float64(own[i])/float64(own[sideFloor]), targets[i].name+"-cold-own-cpu-vs-floor")
	}
	b.ReportMetric(0, "ns/op")
}

// BenchmarkThroughput8Sessions runs 8 sessions calling echo at once, on
// each side in turn (50 calls per session and side per iteration,
// rotating who goes first), and reports calls per second and the CPU of
// each side's processes per call.
func BenchmarkThroughput8Sessions(b *testing.B) {
	const sessions, batch = 8, 50
	targets := benchAll(b)
	idle := make([]int64, len(targets))
	for i, bt := range targets {
		idle[i] = rss(b, bt.pid)
	}
	conns := make([][]*mcp.ClientSession, len(targets))
	for i, bt := range targets {
		for range sessions {
			cs := bt.connect(b)
			for range 50 {
				bt.call(b, cs)
			}
			conns[i] = append(conns[i], cs)
		}
	}
	busy := make([]time.Duration, len(targets))
	cpu := make([]time.Duration, len(targets))
	own := make([]time.Duration, len(targets))
	for i, bt := range targets {
		o, t := bt.cpu()
		own[i], cpu[i] = -o, -t
	}
	calls := 0
	for round := 0; b.Loop(); round++ {
		for i := range inTurn(round, len(targets)) {
			bt := targets[i]
			var wg sync.WaitGroup
			t0 := time.Now()
			for _, cs := range conns[i] {
				wg.Go(func() {
					for range batch {
						bt.call(b, cs)
					}
				})
			}
			wg.Wait()
			busy[i] += time.Since(t0)
		}
		calls += sessions * batch
	}
	rate := make([]float64, len(targets))
	for i, bt := range targets {
		o, t := bt.cpu()
		own[i] += o
		cpu[i] += t
		rate[i] = float64(calls) / busy[i].Seconds()
		b.ReportMetric(rate[i], bt.name+"-calls/s")
		if own[i] != cpu[i] { // a gateway: its own share, without mcp-demo's
			b.ReportMetric(float64(own[i].Microseconds())/float64(calls), bt.name+"-own-cpu-µs/call")
		}
		b.ReportMetric(float64(cpu[i].Microseconds())/float64(calls), bt.name+"-cpu-µs/call")
	}
	b.ReportMetric(rate[sideBare]/rate[sideDirect], "bare-throughput-ratio")
	b.ReportMetric(rate[sideFloor]/rate[sideDirect], "sdkfloor-throughput-ratio")
	b.ReportMetric(rate[sideToolgate]/rate[sideDirect], "throughput-ratio")
	for i := sideToolgate; i < len(targets); i++ {
		b.ReportMetric(rate[i]/rate[sideFloor], targets[i].name+"-throughput-vs-floor")
		b.ReportMetric(float64(own[i])/float64(own[sideFloor]), targets[i].name+"-own-cpu-vs-floor")
		b.ReportMetric(rate[i]/rate[sideBare], targets[i].name+"-throughput-vs-bare")
		b.ReportMetric(float64(own[i])/float64(own[sideBare]), targets[i].name+"-own-cpu-vs-bare")
	}
	// Resident memory of each side's own process (not its servers), idle
	// after connecting and after the run; 0 where /proc is missing.
	for i, bt := range targets {
		b.ReportMetric(float64(idle[i])/(1<<20), bt.name+"-rss-idle-MiB")
		b.ReportMetric(float64(rss(b, bt.pid))/(1<<20), bt.name+"-rss-after-MiB")
	}
	b.ReportMetric(0, "ns/op")
}
