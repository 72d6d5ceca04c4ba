package toolsearch

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The quality test measures ranking on the real tool lists of two servers
// (testdata/everything.json: @modelcontextprotocol/server-everything;
// testdata/mcpdemo.json: mcp-demo --tools 200, as server "files"),
// regenerated with testdata/collect. testdata/queries.json holds labelled
// queries: mostly tasks described in other words than the tool's own, plus
// exact names and separator variants ("exact": true) that must rank first.
//
// Queries at even positions are the tuning half, odd positions the
// held-out half. The queries were written before the synonym table, and
// the table was not edited to fit them; feature weights, field weights and
// BM25 parameters were chosen by the tuning half only (the results sit on
// a plateau: neighbouring values change one or two queries). The
// misspelling queries were added as a category of their own, since typed
// queries carry typos and nothing else exercised Typos.

type fixture struct {
	Server       string `json:"server"`
	Instructions string `json:"instructions"`
	Tools        []struct {
		Name        string   `json:"name"`
		Title       string   `json:"title"`
		Description string   `json:"description"`
		Properties  []string `json:"properties"`
	} `json:"tools"`
}

type labelledQuery struct {
	Query string   `json:"query"`
	Want  []string `json:"want"`
	Exact bool     `json:"exact"`
}

var unsafeNameChars = regexp.MustCompile(`[^A-Za-z0-9_]`)

func loadDocs(t testing.TB) []Doc {
	t.Helper()
	var docs []Doc
	for _, name := range []string{"everything.json", "mcpdemo.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		var f fixture
		if err := json.Unmarshal(data, &f); err != nil {
			t.Fatalf("decode %s: %v", name, err)
		}
		for _, tool := range f.Tools {
			docs = append(docs, Doc{
				ID:           "mcp__" + f.Server + "__" + unsafeNameChars.ReplaceAllString(tool.Name, "_"),
				Name:         tool.Name,
				Server:       f.Server,
				Title:        tool.Title,
				Description:  tool.Description,
				Instructions: f.Instructions,
				Properties:   tool.Properties,
			})
		}
	}
	return docs
}

func loadQueries(t testing.TB, docs []Doc) []labelledQuery {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "queries.json"))
	if err != nil {
		t.Fatal(err)
	}
	var qs []labelledQuery
	if err := json.Unmarshal(data, &qs); err != nil {
		t.Fatalf("decode queries.json: %v", err)
	}
	known := map[string]bool{}
	for _, d := range docs {
		known[d.ID] = true
	}
	for _, q := range qs {
		for _, id := range q.Want {
			if !known[id] {
				t.Fatalf("query %q wants unknown tool %s", q.Query, id)
			}
		}
	}
	return qs
}

// recall is the share of queries with an acceptable tool in the top k.
type recall struct{ at1, at8, n int }

func (r recall) String() string {
	if r.n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f / %.3f", float64(r.at1)/float64(r.n), float64(r.at8)/float64(r.n))
}

func (r recall) at8Rate() float64 { return float64(r.at8) / float64(r.n) }

type evaluation struct {
	all, tune, heldOut recall
	exactFirst, exact  int
	misses             []string
}

func evaluate(ix *Index, qs []labelledQuery) evaluation {
	var ev evaluation
	for i, q := range qs {
		hits := ix.Search(q.Query, 8)
		rank := slices.IndexFunc(hits, func(h Hit) bool { return slices.Contains(q.Want, h.ID) })
		half := &ev.tune
		if i%2 == 1 {
			half = &ev.heldOut
		}
		for _, r := range []*recall{&ev.all, half} {
			r.n++
			if rank == 0 {
				r.at1++
			}
			if rank >= 0 {
				r.at8++
			}
		}
		if q.Exact {
			ev.exact++
			if rank == 0 {
				ev.exactFirst++
			}
		}
		if rank != 0 {
			var top []string
			for _, h := range hits[:min(3, len(hits))] {
				top = append(top, strings.TrimPrefix(h.ID, "mcp__"))
			}
			ev.misses = append(ev.misses, fmt.Sprintf("#%d rank %d %q → %v", i, rank+1, q.Query, top))
		}
	}
	return ev
}

func TestQualityAblation(t *testing.T) {
	docs := loadDocs(t)
	qs := loadQueries(t, docs)
	if len(qs) < 60 {
		t.Fatalf("only %d labelled queries; the issue asks for at least 60", len(qs))
	}

	with := func(o Options, f func(*Options)) Options { f(&o); return o }
	def := DefaultOptions()
	configs := []struct {
		name string
		opts Options
	}{
		{"plain BM25", Options{}},
		{"+ split identifiers", Options{SplitIdentifiers: true}},
		{"+ stemming", Options{SplitIdentifiers: true, Stemming: true}},
		{"+ field weights", Options{SplitIdentifiers: true, Stemming: true, FieldWeights: true}},
		{"+ name match", Options{SplitIdentifiers: true, Stemming: true, FieldWeights: true, NameMatch: true}},
		{"+ typos", Options{SplitIdentifiers: true, Stemming: true, FieldWeights: true, NameMatch: true, Typos: true}},
		{"+ synonyms", Options{SplitIdentifiers: true, Stemming: true, FieldWeights: true, NameMatch: true, Typos: true, Synonyms: true}},
		{"+ n-grams", Options{SplitIdentifiers: true, Stemming: true, FieldWeights: true, NameMatch: true, Typos: true, Synonyms: true, NGrams: true}},
		{"default", def},
		{"default − split identifiers", with(def, func(o *Options) { o.SplitIdentifiers = false })},
		{"default − stemming", with(def, func(o *Options) { o.Stemming = false })},
		{"default − field weights", with(def, func(o *Options) { o.FieldWeights = false })},
		{"default − name match", with(def, func(o *Options) { o.NameMatch = false })},
		{"default − typos", with(def, func(o *Options) { o.Typos = false })},
		{"default − synonyms", with(def, func(o *Options) { o.Synonyms = false })},
		{"default + n-grams", with(def, func(o *Options) { o.NGrams = true })},
	}

	var table strings.Builder
	fmt.Fprintf(&table, "%d tools, %d queries (%d exact-name); recall@1 / recall@8\n", len(docs), len(qs), evaluate(Build(docs, def), qs).exact)
	fmt.Fprintf(&table, "%-30s %-15s %-15s %-15s %s\n", "configuration", "all", "tuning half", "held-out half", "exact@1")
	results := map[string]evaluation{}
	for _, c := range configs {
		ev := evaluate(Build(docs, c.opts), qs)
		results[c.name] = ev
		fmt.Fprintf(&table, "%-30s %-15s %-15s %-15s %d/%d\n", c.name, ev.all, ev.tune, ev.heldOut, ev.exactFirst, ev.exact)
	}
	t.Logf("\n%s", table.String())

	shipped := results["default"]
	for _, m := range shipped.misses {
		t.Logf("default not at rank 1: %s", m)
	}
	if got := shipped.all.at8Rate(); got < 0.9 {
		t.Errorf("DefaultOptions recall@8 on all queries = %.3f, want ≥ 0.9", got)
	}
	if got := shipped.heldOut.at8Rate(); got < 0.85 {
		t.Errorf("DefaultOptions recall@8 on the held-out half = %.3f, want ≥ 0.85", got)
	}
	if shipped.exactFirst != shipped.exact {
		t.Errorf("DefaultOptions put %d of %d exact-name queries at rank 1, want all", shipped.exactFirst, shipped.exact)
	}
}
