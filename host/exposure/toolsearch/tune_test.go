package toolsearch

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestTuneFieldWeights searches a grid of field weights and BM25
// parameters on the tuning set only (never the holdout) and prints the
// best. It is a tool for whoever changes the ranking, not a check, so it
// runs only when asked:
//
//	TOOLSEARCH_TUNE=1 go test -v -run TestTuneFieldWeights ./host/exposure/toolsearch/
func TestTuneFieldWeights(t *testing.T) {
	if os.Getenv("TOOLSEARCH_TUNE") == "" {
		t.Skip("set TOOLSEARCH_TUNE=1 to search the field weights on the tuning set")
	}
	tuning := loadTuningSet(t)
	type result struct {
		opts Options
		ev   evaluation
	}
	var all []result
	for _, name := range []float64{0.5, 1, 1.5, 2, 3} {
		for _, props := range []float64{0.25, 0.5, 1, 1.5} {
			for _, k1 := range []float64{0.9, 1.2, 1.6} {
				for _, b := range []float64{0.5, 0.75, 0.9} {
					o := DefaultOptions()
					o.NameWeight, o.PropertyWeight, o.K1, o.B = name, props, k1, b
					all = append(all, result{o, evaluate(Build(tuning.docs, o), tuning.queries)})
				}
			}
		}
	}
	var out strings.Builder
	for _, r := range all {
		fmt.Fprintf(&out, "name %.2f props %.2f k1 %.1f b %.2f: %s\n", r.opts.NameWeight, r.opts.PropertyWeight, r.opts.K1, r.opts.B, r.ev.all)
	}
	t.Logf("tuning set, r@1 r@8 MRR:\n%s", out.String())
}
