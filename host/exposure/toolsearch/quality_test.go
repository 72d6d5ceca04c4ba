package toolsearch

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The quality test measures ranking on two independent evaluation sets of
// real tool lists and labelled queries:
//
//   - the tuning set: testdata/everything.json
//     (@modelcontextprotocol/server-everything) and testdata/mcpdemo.json
//     (mcp-demo --tools 200, as server "files"), regenerated with
//     testdata/collect, and testdata/queries.json. Every weight, the
//     synonym table and BM25's parameters were chosen on it.
//   - the holdout set: testdata/holdout/ (seven other servers: git, fetch,
//     sqlite, postgres, time, puppeteer, playwright) and its queries.json,
//     written before the issue 20 ranking changes and never used to tune
//     (see testdata/holdout/README.md). It says whether the ranking holds
//     up on tool lists it was never shaped by.
//
// Queries are mostly tasks described in other words than the tool's own,
// plus exact names, separator variants and flat model names that must
// rank first.

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

// toolsList is a tools/list result, the holdout's fixture format.
type toolsList struct {
	Tools []struct {
		Name        string `json:"name"`
		Title       string `json:"title"`
		Description string `json:"description"`
		InputSchema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"inputSchema"`
	} `json:"tools"`
}

type labelledQuery struct {
	Query string   `json:"query"`
	Want  []string `json:"want"`
	// Exact marks a tuning-set query that names its tool.
	Exact bool `json:"exact"`
	// Kind is the holdout's category: task, server, exact, separator,
	// model or typo.
	Kind string `json:"kind"`
}

// mustBeFirst reports whether the query names its tool, so the tool must
// rank first.
func (q labelledQuery) mustBeFirst() bool {
	return q.Exact || q.Kind == "exact" || q.Kind == "separator" || q.Kind == "model"
}

// evalSet is one evaluation set: tools and labelled queries.
type evalSet struct {
	name    string
	docs    []Doc
	queries []labelledQuery
}

var unsafeNameChars = regexp.MustCompile(`[^A-Za-z0-9_]`)

func flatID(server, tool string) string {
	return "mcp__" + server + "__" + unsafeNameChars.ReplaceAllString(tool, "_")
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
}

func loadDocs(t testing.TB) []Doc {
	t.Helper()
	var docs []Doc
	for _, name := range []string{"everything.json", "mcpdemo.json"} {
		var f fixture
		readJSON(t, filepath.Join("testdata", name), &f)
		for _, tool := range f.Tools {
			docs = append(docs, Doc{
				ID:           flatID(f.Server, tool.Name),
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

func loadTuningSet(t testing.TB) evalSet {
	t.Helper()
	s := evalSet{name: "tuning", docs: loadDocs(t)}
	readJSON(t, filepath.Join("testdata", "queries.json"), &s.queries)
	checkLabels(t, s)
	return s
}

// loadHoldoutSet reads testdata/holdout: every <server>.json but
// queries.json is that server's tools/list result. Properties are the
// top-level input property names, as the exposure layer indexes them.
func loadHoldoutSet(t testing.TB) evalSet {
	t.Helper()
	dir := filepath.Join("testdata", "holdout")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := evalSet{name: "holdout"}
	for _, file := range files {
		server := strings.TrimSuffix(filepath.Base(file), ".json")
		if server == "queries" {
			continue
		}
		var list toolsList
		readJSON(t, file, &list)
		for _, tool := range list.Tools {
			props := make([]string, 0, len(tool.InputSchema.Properties))
			for p := range tool.InputSchema.Properties {
				props = append(props, p)
			}
			sort.Strings(props)
			s.docs = append(s.docs, Doc{
				ID: flatID(server, tool.Name), Name: tool.Name, Server: server,
				Title: tool.Title, Description: tool.Description, Properties: props,
			})
		}
	}
	readJSON(t, filepath.Join(dir, "queries.json"), &s.queries)
	checkLabels(t, s)
	return s
}

func checkLabels(t testing.TB, s evalSet) {
	t.Helper()
	known := map[string]bool{}
	for _, d := range s.docs {
		known[d.ID] = true
	}
	for _, q := range s.queries {
		if len(q.Want) == 0 {
			t.Fatalf("%s: query %q wants no tool", s.name, q.Query)
		}
		for _, id := range q.Want {
			if !known[id] {
				t.Fatalf("%s: query %q wants unknown tool %s", s.name, q.Query, id)
			}
		}
	}
}

// scores accumulates recall@1, recall@8 and the mean reciprocal rank
// (within the top 8) over queries.
type scores struct {
	at1, at8, n int
	rr          float64
}

func (s *scores) add(rank int) {
	s.n++
	if rank == 0 {
		s.at1++
	}
	if rank >= 0 {
		s.at8++
		s.rr += 1 / float64(rank+1)
	}
}

func (s scores) recall1() float64 { return float64(s.at1) / float64(s.n) }
func (s scores) recall8() float64 { return float64(s.at8) / float64(s.n) }
func (s scores) mrr() float64     { return s.rr / float64(s.n) }

func (s scores) String() string {
	if s.n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f %.3f %.3f", s.recall1(), s.recall8(), s.mrr())
}

type evaluation struct {
	all               scores
	byKind            map[string]*scores
	exactFirst, exact int
	misses            []string
}

func evaluate(ix *Index, qs []labelledQuery) evaluation {
	ev := evaluation{byKind: map[string]*scores{}}
	for i, q := range qs {
		hits := ix.Search(q.Query, 8)
		rank := slices.IndexFunc(hits, func(h Hit) bool { return slices.Contains(q.Want, h.ID) })
		ev.all.add(rank)
		if q.Kind != "" {
			if ev.byKind[q.Kind] == nil {
				ev.byKind[q.Kind] = &scores{}
			}
			ev.byKind[q.Kind].add(rank)
		}
		if q.mustBeFirst() {
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

// Targets the shipped configuration must meet (issue 20). The tuning set's
// floors sit at what it measured before the holdout existed (96 and 84 of
// 99 queries), so a change that helps the holdout by hurting the tuning
// set fails too.
const (
	tuningRecall8Floor  = 0.969
	tuningRecall1Floor  = 0.848
	holdoutRecall8Floor = 0.92
	holdoutRecall1Floor = 0.75
)

func TestQualityAblation(t *testing.T) {
	tuning, holdout := loadTuningSet(t), loadHoldoutSet(t)
	if len(tuning.queries) < 60 || len(holdout.queries) < 150 {
		t.Fatalf("%d tuning and %d holdout queries; want at least 60 and 150", len(tuning.queries), len(holdout.queries))
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
		{"default − fill", with(def, func(o *Options) { o.Fill = false })},
		{"default, name/property weight 1", with(def, func(o *Options) { o.NameWeight, o.PropertyWeight = 1, 1 })},
	}

	var table strings.Builder
	fmt.Fprintf(&table, "tuning: %d tools, %d queries; holdout: %d tools, %d queries (never tuned on)\n",
		len(tuning.docs), len(tuning.queries), len(holdout.docs), len(holdout.queries))
	fmt.Fprintf(&table, "%-30s %-19s %-19s %s\n", "configuration", "tuning r@1 r@8 MRR", "holdout r@1 r@8 MRR", "names@1 tuning, holdout")
	results := map[string][2]evaluation{}
	for _, c := range configs {
		tu, ho := evaluate(Build(tuning.docs, c.opts), tuning.queries), evaluate(Build(holdout.docs, c.opts), holdout.queries)
		results[c.name] = [2]evaluation{tu, ho}
		fmt.Fprintf(&table, "%-30s %-19s %-19s %d/%d, %d/%d\n", c.name, tu.all, ho.all, tu.exactFirst, tu.exact, ho.exactFirst, ho.exact)
	}
	t.Logf("\n%s", table.String())

	shipped := results["default"]
	var kinds strings.Builder
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range shipped[1].byKind {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Fprintf(&kinds, "  %-10s %3d queries  r@1 r@8 MRR %s\n", k, shipped[1].byKind[k].n, shipped[1].byKind[k])
	}
	t.Logf("default on the holdout by kind of query:\n%s", kinds.String())
	for i, set := range []evalSet{tuning, holdout} {
		for _, m := range shipped[i].misses {
			t.Logf("default, %s, not at rank 1: %s", set.name, m)
		}
	}

	floors := []struct {
		set    string
		ev     evaluation
		r1, r8 float64
	}{
		{"tuning", shipped[0], tuningRecall1Floor, tuningRecall8Floor},
		{"holdout", shipped[1], holdoutRecall1Floor, holdoutRecall8Floor},
	}
	for _, f := range floors {
		if got := f.ev.all.recall8(); got < f.r8 {
			t.Errorf("DefaultOptions recall@8 on the %s set = %.3f, want ≥ %.2f", f.set, got, f.r8)
		}
		if got := f.ev.all.recall1(); got < f.r1 {
			t.Errorf("DefaultOptions recall@1 on the %s set = %.3f, want ≥ %.2f", f.set, got, f.r1)
		}
		if f.ev.exactFirst != f.ev.exact {
			t.Errorf("DefaultOptions put %d of %d name queries of the %s set at rank 1, want all", f.ev.exactFirst, f.ev.exact, f.set)
		}
	}
}
