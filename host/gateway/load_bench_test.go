package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/gateway"
	"github.com/toolgate/toolgate/host/manager"
)

// Load shape of BenchmarkGatewayUnderLoad.
const (
	loadSessions = 50
	loadCalls    = 1000 // per iteration, all at once
	// loadToolTimeout is the server's tool_timeout_sec: a hanging call
	// must come back as a timeout error after it.
	loadToolTimeout = 2 * time.Second
	// loadDeadline is each call's client-side deadline: a call still
	// unanswered then is lost. Generous, because 1000 calls share a
	// busy machine; the highest latency seen is reported.
	loadDeadline = 60 * time.Second
)

// loadKind is what one call asks of the server.
type loadKind int

const (
	kindEcho       loadKind = iota // answers its own text (server steady)
	kindFail                       // answers isError (steady)
	kindHang                       // never answers: the tool timeout ends it (steady)
	kindCrashyEcho                 // answers its own text, unless the crash takes it (server crashy)
	kindCrash                      // kills crashy mid-round; the manager restarts it
)

// loadKindOf spreads the calls: half to crashy (echo, one crash), half
// to steady (echo, 1 in 10 failing, 1 in 50 hanging). The hangs are on
// the server that does not crash, so it is the timeout that ends them.
func loadKindOf(i int) loadKind {
	switch {
	case i == loadCalls/2:
		return kindCrash
	case i%2 == 0:
		return kindCrashyEcho
	case i%50 == 7:
		return kindHang
	case i%10 == 3:
		return kindFail
	}
	return kindEcho
}

// loadTally counts the outcomes of one iteration.
type loadTally struct {
	answered, toolErrors, protocolErrors int
	lost, wrong, timeouts                int
	latencies                            []time.Duration
	problems                             []string
}

// BenchmarkGatewayUnderLoad sends, per iteration, 1000 concurrent calls
// over 50 HTTP sessions through the gateway to an mcp-demo server that
// fails some calls (isError), hangs others (cut by tool_timeout_sec = 2)
// and crashes once mid-round (the manager restarts it). It asserts that
// no call is lost (each returns before its deadline), none gets another
// call's answer, the server sees no call twice, and once the sessions
// are closed the goroutines and RSS are back to their baseline. Metrics:
// outcome counts per iteration, p50/p99/max latency, goroutines and RSS
// before and after. Run: make bench, or
//
//	TOOLGATE_BIN=$PWD/bin go test -run '^$' -bench GatewayUnderLoad -benchtime 3x ./host/gateway/
func BenchmarkGatewayUnderLoad(b *testing.B) {
	dir := b.TempDir()
	steadyLog, crashyLog := dir+"/steady.jsonl", dir+"/crashy.jsonl"
	f := newFixtureWith(b, fixtureOptions{
		restart:    manager.RestartPolicy{Initial: 10 * time.Millisecond, Max: 50 * time.Millisecond, StableAfter: time.Millisecond},
		noAuditLog: true,
		gateway:    gateway.Options{Logger: hclog.NewNullLogger()},
		hostLogger: hclog.NewNullLogger(), // the crash and timeouts warn per call
	}, "", loadServer(b, "steady", steadyLog), loadServer(b, "crashy", crashyLog, "--crash-tool"))
	srv := f.httpServer(b, config.Serve{}, nil)

	// One untimed round first: what the first calls build once (pools,
	// JSON and schema caches, the restarted server's buffers) is not
	// what "back to baseline" is about.
	loadRound(b, f, srv.URL+gateway.Path, -1)
	waitGoroutines(0, time.Second)
	settle()
	goroutinesBefore := runtime.NumGoroutine()
	rssBefore, haveRSS := residentBytes()
	heapBefore := heapInUse()

	var total loadTally
	round := 0
	for b.Loop() {
		tally := loadRound(b, f, srv.URL+gateway.Path, round)
		round++
		total.answered += tally.answered
		total.toolErrors += tally.toolErrors
		total.protocolErrors += tally.protocolErrors
		total.lost += tally.lost
		total.wrong += tally.wrong
		total.timeouts += tally.timeouts
		total.latencies = append(total.latencies, tally.latencies...)
		total.problems = append(total.problems, tally.problems...)
	}
	dups := duplicateCalls(b, steadyLog) + duplicateCalls(b, crashyLog)

	// Back to baseline: the sessions are closed, but their goroutines
	// (go-sdk's, the gateway's, the HTTP server's connections) end
	// asynchronously and announce it nowhere, so the count is polled.
	goroutinesAfter := waitGoroutines(goroutinesBefore, 30*time.Second)
	settle()
	rssAfter, _ := residentBytes()
	heapAfter := heapInUse()

	n := float64(round)
	b.ReportMetric(float64(total.answered)/n, "answered/op")
	b.ReportMetric(float64(total.toolErrors)/n, "tool-errors/op")
	b.ReportMetric(float64(total.protocolErrors)/n, "protocol-errors/op")
	b.ReportMetric(float64(total.timeouts)/n, "timeouts/op")
	b.ReportMetric(float64(total.lost), "lost")
	b.ReportMetric(float64(total.wrong+dups), "wrong-or-duplicated")
	slices.Sort(total.latencies)
	b.ReportMetric(loadMS(loadPercentile(total.latencies, 50)), "p50-ms")
	b.ReportMetric(loadMS(loadPercentile(total.latencies, 99)), "p99-ms")
	b.ReportMetric(loadMS(total.latencies[len(total.latencies)-1]), "max-ms")
	b.ReportMetric(float64(goroutinesBefore), "goroutines-before")
	b.ReportMetric(float64(goroutinesAfter), "goroutines-after")
	b.ReportMetric(float64(heapBefore)/(1<<20), "heap-before-MiB")
	b.ReportMetric(float64(heapAfter)/(1<<20), "heap-after-MiB")
	if haveRSS {
		b.ReportMetric(float64(rssBefore)/(1<<20), "rss-before-MiB")
		b.ReportMetric(float64(rssAfter)/(1<<20), "rss-after-MiB")
	}

	for _, p := range total.problems[:min(len(total.problems), 20)] {
		b.Log(p)
	}
	if total.lost != 0 || total.wrong != 0 || dups != 0 {
		b.Errorf("%d call(s) lost, %d wrong answer(s), %d call(s) the server saw twice", total.lost, total.wrong, dups)
	}
	if total.answered+total.toolErrors+total.protocolErrors+total.lost != round*loadCalls {
		b.Errorf("%d outcomes for %d calls", total.answered+total.toolErrors+total.protocolErrors+total.lost, round*loadCalls)
	}
	if goroutinesAfter > goroutinesBefore {
		b.Errorf("goroutines: %d before, %d after the sessions closed", goroutinesBefore, goroutinesAfter)
	}
	// Every session's memory is released: an ended session that stays
	// reachable costs about 100 KiB of live heap (its go-sdk server,
	// step and tool list), 5 MiB per round of 50.
	if heapAfter > heapBefore+2<<20 {
		b.Errorf("live heap: %d KiB before, %d KiB after the sessions closed", heapBefore>>10, heapAfter>>10)
	}
	// The heap the calls needed goes back to the OS (FreeOSMemory);
	// what stays is the runtime's own bookkeeping and fragmentation.
	if slack := max(32<<20, rssBefore/4); haveRSS && rssAfter > rssBefore+slack {
		b.Errorf("RSS: %d MiB before, %d MiB after (allowed: +%d MiB); live heap %d KiB before, %d KiB after",
			rssBefore>>20, rssAfter>>20, slack>>20, heapBefore>>10, heapAfter>>10)
	}
}

// loadServer is an mcp-demo block of the load test: every tool
// approved, and the tool timeout that ends hanging calls.
func loadServer(b *testing.B, name, calls string, args ...string) string {
	body := fmt.Sprintf("default_tools_approval_mode = \"approve\"\n  tool_timeout_sec = %d", int(loadToolTimeout/time.Second))
	return demoServer(b, name, calls, body, args...)
}

// loadRound opens the sessions, runs loadCalls calls at once across
// them, closes the sessions and returns the outcomes.
func loadRound(b *testing.B, f *fixture, url string, round int) loadTally {
	tr := &http.Transport{MaxIdleConnsPerHost: loadSessions}
	defer tr.CloseIdleConnections()
	client := mcp.NewClient(&mcp.Implementation{Name: "load", Version: "1"}, nil)
	sessions := make([]*mcp.ClientSession, loadSessions)
	for i := range sessions {
		cs, err := client.Connect(b.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: tr}}, nil)
		if err != nil {
			b.Fatalf("session %d: %v", i, err)
		}
		sessions[i] = cs
	}
	defer func() {
		for _, cs := range sessions {
			_ = cs.Close()
		}
	}()

	var (
		mu    sync.Mutex
		tally loadTally
		wg    sync.WaitGroup
	)
	start := make(chan struct{})
	for i := range loadCalls {
		wg.Go(func() {
			id := fmt.Sprintf("r%d-c%d", round, i)
			name, args := loadCall(loadKindOf(i), id)
			<-start
			ctx, cancel := context.WithTimeout(b.Context(), loadDeadline)
			defer cancel()
			began := time.Now()
			res, err := sessions[i%loadSessions].CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
			took := time.Since(began)
			mu.Lock()
			defer mu.Unlock()
			tally.latencies = append(tally.latencies, took)
			tally.judge(loadKindOf(i), id, res, err)
		})
	}
	close(start)
	wg.Wait()
	return tally
}

func loadCall(k loadKind, id string) (string, map[string]any) {
	switch k {
	case kindFail:
		return "mcp__steady__fail", map[string]any{"message": id}
	case kindHang:
		return "mcp__steady__slow", map[string]any{"ms": int(time.Hour / time.Millisecond)}
	case kindCrash:
		return "mcp__crashy__crash", map[string]any{}
	case kindCrashyEcho:
		return "mcp__crashy__echo", map[string]any{"text": id}
	}
	return "mcp__steady__echo", map[string]any{"text": id}
}

// judge counts one outcome. Any call may fail with the crash (it was in
// flight, or the server was restarting); what must never happen is a
// call without an outcome, a success where none is possible, or another
// call's answer.
func (t *loadTally) judge(k loadKind, id string, res *mcp.CallToolResult, err error) {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		t.lost++
		t.problems = append(t.problems, fmt.Sprintf("%s: no answer within %s", id, loadDeadline))
	case err != nil:
		t.protocolErrors++
		t.problems = append(t.problems, fmt.Sprintf("%s: protocol error: %v", id, err))
	case res.IsError:
		t.toolErrors++
		if k == kindHang {
			t.timeouts++
		}
		if k == kindFail && text(res) != id && !downOrCrashed(text(res)) {
			t.wrong++
			t.problems = append(t.problems, fmt.Sprintf("%s: tool error of another call: %q", id, text(res)))
		}
	case k != kindEcho && k != kindCrashyEcho:
		t.wrong++
		t.problems = append(t.problems, fmt.Sprintf("%s: a call that cannot succeed answered %q", id, text(res)))
	case text(res) != id:
		t.wrong++
		t.problems = append(t.problems, fmt.Sprintf("%s: answered %q, another call's text", id, text(res)))
	default:
		t.answered++
	}
}

// downOrCrashed tells a failure of the server (crash, restart) from a
// tool's own error text.
func downOrCrashed(s string) bool {
	return len(s) > 0 && s[0] != 'r' // the fail tool's texts are call ids, "r<round>-c<i>"
}

// duplicateCalls counts echo and fail calls the server received more
// than once: the gateway must never replay a tools/call.
func duplicateCalls(b *testing.B, path string) int {
	fh, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer fh.Close()
	seen := map[string]int{}
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec struct {
			Event, Tool string
			Arguments   map[string]any
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil || rec.Event != "call" {
			continue
		}
		for _, key := range []string{"text", "message"} {
			if id, ok := rec.Arguments[key].(string); ok {
				seen[id]++
			}
		}
	}
	dups := 0
	for id, n := range seen {
		if n > 1 {
			dups++
			b.Logf("the server received %s %d times", id, n)
		}
	}
	return dups
}

// settle collects garbage and returns freed memory to the OS, so that
// goroutine and RSS readings compare like with like.
func settle() {
	runtime.GC()
	debug.FreeOSMemory()
}

// waitGoroutines waits until no more than want goroutines run, or for
// limit; it returns the last count.
func waitGoroutines(want int, limit time.Duration) int {
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		n := runtime.NumGoroutine()
		if n <= want || time.Now().After(deadline) {
			return n
		}
		<-tick.C
	}
}

func loadPercentile(sorted []time.Duration, p int) time.Duration {
	return sorted[(len(sorted)-1)*p/100]
}

func loadMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// heapInUse is the live heap's spans, after settle.
func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
