package gateway_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/toolgate/toolgate/internal/testbin"
)

// BenchmarkLargeResultRSS is BenchmarkLargeResult against the real
// `toolgate serve --http` process, as a user runs it: each iteration
// starts a fresh gateway, passes one 10 MiB result and reports how much
// its peak RSS (VmHWM, which only grows) rose during the call, as a
// multiple of the result's size (median and highest). Linux only: it
// reads /proc.
func BenchmarkLargeResultRSS(b *testing.B) {
	demo := testbin.Path(b, "mcp-demo")
	cfg := filepath.Join(b.TempDir(), "toolgate.hcl")
	src := fmt.Sprintf("server \"demo\" {\n  command = %q\n  default_tools_approval_mode = \"approve\"\n}\n", demo)
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	var growth []float64
	for b.Loop() {
		gw := startTarget(b, "gateway", "mcp__demo__big", []string{testbin.Path(b, "toolgate"), "serve", "--http", "127.0.0.1:0", "--config", cfg})
		gw.waitServed(b)
		c := newRawClient(b, gw.url)
		before := peakRSS(b, gw.pid)
		c.call(b, gw.tool, fmt.Sprintf(`{"bytes":%d}`, largeResult))
		growth = append(growth, float64(peakRSS(b, gw.pid)-before)/largeResult)
		// Stop it now rather than at the end, so that gateways holding
		// a large heap do not pile up; the cleanup reaps it.
		if p, err := os.FindProcess(gw.pid); err == nil {
			_ = p.Signal(os.Interrupt)
		}
	}
	slices.Sort(growth)
	b.ReportMetric(growth[len(growth)/2], "rss-growth-ratio-p50")
	b.ReportMetric(growth[len(growth)-1], "rss-growth-ratio-max")
	b.ReportMetric(0, "ns/op")
}

// peakRSS is the process's VmHWM in bytes.
func peakRSS(tb testing.TB, pid int) int64 {
	tb.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	for line := range bytes.Lines(status) {
		if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(v), []byte(" kB"))), 10, 64)
			if err != nil {
				tb.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	tb.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// BenchmarkCappedResultRSS is BenchmarkLargeResultRSS with serve's
// max_result_bytes = 1 MiB (issue 31): a 10 MiB result is refused where
// toolgate reads it, so the peak RSS growth of the gateway is reported
// as a multiple of the cap (target ≤ 4×); a 768 KiB result under the cap
// is passed on, and its growth is reported as a multiple of the result.
// Each runs with mcp-demo over stdio and over Streamable HTTP (mcp-demo
// --http, which answers in event streams: the cap is enforced on the
// event before go-sdk decodes it).
//
//	go test -run '^$' -bench CappedResultRSS -benchtime 5x ./host/gateway/
func BenchmarkCappedResultRSS(b *testing.B) {
	const limit = 1 << 20
	for _, tc := range []struct {
		name   string
		result int
		per    int // the ratio's denominator
	}{
		{"over-cap-10MiB", largeResult, limit},
		{"under-cap-768KiB", 768 << 10, 768 << 10},
	} {
		for _, down := range []string{"stdio", "sse"} {
			b.Run(tc.name+"/"+down, func(b *testing.B) {
				demo := testbin.Path(b, "mcp-demo")
				where := fmt.Sprintf("command = %q", demo)
				if down == "sse" {
					web := startTarget(b, "mcp-demo --http", "big", []string{demo, "--http", "127.0.0.1:0", "--name", "demo"})
					where = fmt.Sprintf("url = %q", web.url)
				}
				cfg := filepath.Join(b.TempDir(), "toolgate.hcl")
				src := fmt.Sprintf("serve {\n  max_result_bytes = %d\n}\nserver \"demo\" {\n  %s\n  default_tools_approval_mode = \"approve\"\n}\n", limit, where)
				if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
					b.Fatal(err)
				}
				var growth []float64
				for b.Loop() {
					gw := startTarget(b, "gateway", "mcp__demo__big", []string{testbin.Path(b, "toolgate"), "serve", "--http", "127.0.0.1:0", "--config", cfg})
					gw.waitServed(b)
					c := newRawClient(b, gw.url)
					before := peakRSS(b, gw.pid)
					refused := c.callAllowingError(b, gw.tool, fmt.Sprintf(`{"bytes":%d}`, tc.result))
					growth = append(growth, float64(peakRSS(b, gw.pid)-before)/float64(tc.per))
					if refused != (tc.result > limit) {
						b.Fatalf("a %d-byte result with max_result_bytes = %d: refused = %v", tc.result, limit, refused)
					}
					if p, err := os.FindProcess(gw.pid); err == nil {
						_ = p.Signal(os.Interrupt)
					}
				}
				slices.Sort(growth)
				b.ReportMetric(growth[len(growth)/2], "rss-growth-ratio-p50")
				b.ReportMetric(growth[len(growth)-1], "rss-growth-ratio-max")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// callAllowingError is rawClient.call for an answer that may be a tool
// error; it reports whether it was one saying max_result_bytes.
func (c *rawClient) callAllowingError(tb testing.TB, tool, args string) bool {
	tb.Helper()
	c.id++
	resp := c.post(tb, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, c.id, tool, args))
	defer resp.Body.Close()
	w := &headWriter{}
	if _, err := io.Copy(w, resp.Body); err != nil {
		tb.Fatal(err)
	}
	if !bytes.Contains(w.head, []byte(`"result"`)) {
		tb.Fatalf("calling %s: the answer is %q … %q", tool, w.head, w.tail)
	}
	return bytes.Contains(w.tail, []byte(`"isError":true`)) && bytes.Contains(w.head, []byte("max_result_bytes"))
}
