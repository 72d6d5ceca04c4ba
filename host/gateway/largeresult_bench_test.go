package gateway_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/gateway"
)

// largeResult is the size of the text mcp-demo's big tool returns in
// BenchmarkLargeResult: the 10 MiB of issue 23.
const largeResult = 10 << 20

// BenchmarkLargeResult passes one 10 MiB tool result through the gateway
// (Streamable HTTP in front, mcp-demo over stdio behind), in process, and
// reports what the gateway's process allocates per call as a multiple of
// the result's size: alloc-ratio (bytes allocated, like TotalAlloc) and
// peak-heap-ratio (the highest heap, live and not yet collected, above
// the heap before the call, sampled while the call runs). mcp-demo runs
// in its own process; the client is a plain HTTP client that discards the
// answer, so neither counts. With an audit log the result is also
// projected into its tool_call_end event. See docs/performance.md.
func BenchmarkLargeResult(b *testing.B) {
	b.Run("audit-log", func(b *testing.B) { benchLargeResult(b, false) })
	b.Run("no-audit-log", func(b *testing.B) { benchLargeResult(b, true) })
}

func benchLargeResult(b *testing.B, noAuditLog bool) {
	f := newFixtureWith(b, fixtureOptions{noAuditLog: noAuditLog}, "",
		demoServer(b, "demo", b.TempDir()+"/calls.jsonl", `default_tools_approval_mode = "approve"`))
	srv := f.httpServer(b, config.Serve{}, nil)
	c := newRawClient(b, srv.URL+gateway.Path)
	call := func() int64 {
		return c.call(b, "mcp__demo__big", fmt.Sprintf(`{"bytes":%d}`, largeResult))
	}
	if n := call(); n < largeResult { // warm up lazily built paths
		b.Fatalf("the answer has %d bytes, want at least %d", n, largeResult)
	}
	var allocs, peak uint64
	calls := 0
	for b.Loop() {
		runtime.GC()
		before := readHeap()
		sampler := startHeapSampler()
		call()
		top := sampler.stop()
		after := readHeap()
		allocs += after.allocs - before.allocs
		if top > before.objects {
			peak = max(peak, top-before.objects)
		}
		calls++
	}
	b.ReportMetric(float64(allocs)/float64(calls)/largeResult, "alloc-ratio")
	b.ReportMetric(float64(peak)/largeResult, "peak-heap-ratio")
	b.ReportMetric(0, "ns/op")
}

// heapReading is the process's heap as runtime/metrics sees it.
type heapReading struct {
	allocs  uint64 // bytes allocated so far (TotalAlloc)
	objects uint64 // bytes of heap objects, live or not yet swept
}

var heapMetrics = []string{"/gc/heap/allocs:bytes", "/memory/classes/heap/objects:bytes"}

func readHeap() heapReading {
	s := make([]metrics.Sample, len(heapMetrics))
	for i, name := range heapMetrics {
		s[i].Name = name
	}
	metrics.Read(s)
	return heapReading{allocs: s[0].Value.Uint64(), objects: s[1].Value.Uint64()}
}

// heapSampler records the highest heap seen until stopped. runtime/metrics
// reads without stopping the world, so sampling barely disturbs the call.
type heapSampler struct {
	done chan struct{}
	wg   sync.WaitGroup
	top  uint64
}

func startHeapSampler() *heapSampler {
	s := &heapSampler{done: make(chan struct{})}
	s.wg.Go(func() {
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			s.top = max(s.top, readHeap().objects)
			select {
			case <-s.done:
				return
			case <-t.C:
			}
		}
	})
	return s
}

func (s *heapSampler) stop() uint64 {
	close(s.done)
	s.wg.Wait()
	return max(s.top, readHeap().objects)
}

// rawClient speaks Streamable HTTP with plain requests, so that the
// client allocates next to nothing and the answer is only counted.
type rawClient struct {
	url     string
	http    *http.Client
	session string
	id      int
}

func newRawClient(tb testing.TB, url string) *rawClient {
	tb.Helper()
	tr := &http.Transport{}
	tb.Cleanup(tr.CloseIdleConnections)
	c := &rawClient{url: url, http: &http.Client{Transport: tr}}
	resp := c.post(tb, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	c.session = resp.Header.Get("Mcp-Session-Id")
	drain(tb, resp)
	drain(tb, c.post(tb, `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	drain(tb, c.post(tb, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	c.id = 1
	return c
}

func (c *rawClient) post(tb testing.TB, body string) *http.Response {
	tb.Helper()
	req, err := http.NewRequest(http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		tb.Fatalf("POST %s: %s: %s", body, resp.Status, b)
	}
	return resp
}

// call calls tool and returns how many bytes the answer had. It fails tb
// when the answer is an error.
func (c *rawClient) call(tb testing.TB, tool, args string) int64 {
	tb.Helper()
	c.id++
	resp := c.post(tb, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, c.id, tool, args))
	defer resp.Body.Close()
	w := &headWriter{}
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	if !bytes.Contains(w.head, []byte(`"result"`)) || bytes.Contains(w.tail, []byte(`"isError":true`)) {
		tb.Fatalf("calling %s: the answer is %q … %q", tool, w.head, w.tail)
	}
	return n
}

// headWriter keeps the first and the last KiB written to it.
type headWriter struct{ head, tail []byte }

func (w *headWriter) Write(p []byte) (int, error) {
	const keep = 1024
	if room := keep - len(w.head); room > 0 {
		w.head = append(w.head, p[:min(room, len(p))]...)
	}
	w.tail = append(w.tail, p[max(0, len(p)-keep):]...)
	if len(w.tail) > 2*keep {
		w.tail = append(w.tail[:0], w.tail[len(w.tail)-keep:]...)
	}
	return len(p), nil
}

func drain(tb testing.TB, resp *http.Response) {
	tb.Helper()
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		tb.Fatal(err)
	}
}
