package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testbin"
)

// The benchmarks compare, in the same run, a go-sdk client calling
// mcp-demo's echo through `toolgate serve --http` (mcp-demo behind it
// over stdio) with the same client calling `mcp-demo --http` directly.
// Targets: p50-ratio ≤ 1.15 and throughput-ratio ≥ 0.9. Besides wall
// time they report the CPU time each side's processes spend per call,
// which a busy machine disturbs far less than latency.

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

func startTarget(b *testing.B, name, tool string, argv []string) benchTarget {
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

// benchTargets starts both sides: [0] direct, [1] the gateway.
func benchTargets(b *testing.B) []benchTarget {
	b.Helper()
	demo := testbin.Path(b, "mcp-demo")
	direct := startTarget(b, "direct", "echo", []string{demo, "--http", "127.0.0.1:0", "--name", "demo"})
	cfg := filepath.Join(b.TempDir(), "toolgate.hcl")
	src := fmt.Sprintf("server \"demo\" {\n  command = %q\n  args = [\"--name\", \"demo\"]\n}\n", demo)
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	gw := startTarget(b, "gateway", "mcp__demo__echo", []string{testbin.Path(b, "toolgate"), "serve", "--http", "127.0.0.1:0", "--config", cfg})
	return []benchTarget{direct, gw}
}

func (bt benchTarget) connect(b *testing.B) *mcp.ClientSession {
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

func (bt benchTarget) call(b *testing.B, cs *mcp.ClientSession) {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: bt.tool, Arguments: map[string]any{"text": "hello"}})
	if err != nil || res.IsError {
		b.Errorf("%s: %v %v", bt.name, err, res)
	}
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// BenchmarkCallLatency calls echo on both sides, alternating, one call at
// a time, and reports medians, tails and server CPU per call.
func BenchmarkCallLatency(b *testing.B) {
	targets := benchTargets(b)
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
	for b.Loop() {
		for i, bt := range targets {
			t0 := time.Now()
			bt.call(b, sessions[i])
			lat[i] = append(lat[i], time.Since(t0))
		}
	}
	for i, bt := range targets {
		o, t := bt.cpu()
		own[i] += o
		cpu[i] += t
		if own[i] != cpu[i] { // the gateway: toolgate's share, without mcp-demo's
			b.ReportMetric(float64(own[i].Microseconds())/float64(len(lat[i])), bt.name+"-own-cpu-µs/call")
		}
		b.ReportMetric(float64(percentile(lat[i], 0.50).Microseconds()), bt.name+"-p50-µs")
		b.ReportMetric(float64(percentile(lat[i], 0.99).Microseconds()), bt.name+"-p99-µs")
		b.ReportMetric(float64(cpu[i].Microseconds())/float64(len(lat[i])), bt.name+"-cpu-µs/call")
	}
	b.ReportMetric(float64(percentile(lat[1], 0.5))/float64(percentile(lat[0], 0.5)), "p50-ratio")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkThroughput8Sessions runs 8 sessions calling echo at once, on
// each side in turn (50 calls per session and side per iteration,
// alternating who goes first), and reports calls per second.
func BenchmarkThroughput8Sessions(b *testing.B) {
	const sessions, batch = 8, 50
	targets := benchTargets(b)
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
	calls, round := 0, 0
	for b.Loop() {
		for k := range targets {
			i := (k + round) % len(targets)
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
		round++
	}
	rate := make([]float64, len(targets))
	for i, bt := range targets {
		rate[i] = float64(calls) / busy[i].Seconds()
		b.ReportMetric(rate[i], bt.name+"-calls/s")
	}
	b.ReportMetric(rate[1]/rate[0], "throughput-ratio")
	b.ReportMetric(0, "ns/op")
}
