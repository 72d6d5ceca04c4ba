package toolsearch

import (
	"runtime"
	"slices"
	"testing"
	"time"
)

const benchTools = 10_000

var benchConfigs = []struct {
	name string
	opts func() Options
}{
	{"default", DefaultOptions},
	{"default+ngrams", func() Options { o := DefaultOptions(); o.NGrams = true; return o }},
	{"plain", func() Options { return Options{} }},
}

// BenchmarkBuild measures indexing 10 000 deferred tools and reports the
// heap the finished index keeps (index-MiB) and per tool (B/tool).
func BenchmarkBuild(b *testing.B) {
	docs := synthCorpus(benchTools)
	for _, c := range benchConfigs {
		b.Run(c.name, func(b *testing.B) {
			opts := c.opts()
			retained := retainedBytes(func() any { return Build(docs, opts) })
			b.ReportAllocs()
			for b.Loop() {
				Build(docs, opts)
			}
			b.ReportMetric(float64(retained)/(1<<20), "index-MiB")
			b.ReportMetric(float64(retained)/benchTools, "B/tool")
		})
	}
}

// BenchmarkSearch measures query latency over 10 000 deferred tools with a
// mix of task queries, exact names in other separator styles and
// misspellings, and reports the median and 99th percentile.
func BenchmarkSearch(b *testing.B) {
	docs := synthCorpus(benchTools)
	queries := synthQueries(docs, 1000)
	for _, c := range benchConfigs {
		b.Run(c.name, func(b *testing.B) {
			ix := Build(docs, c.opts())
			var latencies []time.Duration
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				q := queries[i%len(queries)]
				i++
				start := time.Now()
				ix.Search(q, 8)
				latencies = append(latencies, time.Since(start))
			}
			slices.Sort(latencies)
			b.ReportMetric(float64(latencies[len(latencies)/2].Nanoseconds())/1e3, "p50-us")
			b.ReportMetric(float64(latencies[len(latencies)*99/100].Nanoseconds())/1e3, "p99-us")
		})
	}
}

// retainedBytes is the live heap that what build returns keeps reachable.
func retainedBytes(build func() any) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	if after.HeapAlloc < before.HeapAlloc {
		return 0
	}
	return after.HeapAlloc - before.HeapAlloc
}
