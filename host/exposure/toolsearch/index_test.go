package toolsearch

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func ids(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.ID)
	}
	return out
}

func fileTools() []Doc {
	return []Doc{
		{ID: "mcp__files__write_file", Name: "write_file", Server: "files", Description: "Store content under the root.", Properties: []string{"path", "content"}},
		{ID: "mcp__files__delete_file", Name: "delete_file", Server: "files", Description: "Delete a file under the root.", Properties: []string{"path"}},
		{ID: "mcp__files__env", Name: "env", Server: "files", Description: "Report the environment variables.", Properties: []string{"names"}},
		{ID: "mcp__files__image", Name: "image", Server: "files", Description: "Return a small PNG image."},
		// Decoys whose text is all about writing files, so plain BM25
		// prefers them to the tool that is actually called write_file.
		{ID: "mcp__notes__append", Name: "append", Server: "notes", Description: "Write a file: write text to the end of a file, or write a new file."},
		{ID: "mcp__notes__file_writer_status", Name: "file_writer_status", Server: "notes", Title: "Write file status", Description: "Status of the write queue for each file write."},
	}
}

func TestSearchReturnsNothingForUnusableInput(t *testing.T) {
	ix := Build(fileTools(), DefaultOptions())
	tests := []struct {
		name  string
		query string
		limit int
	}{
		{"empty query", "", 8},
		{"blank query", " \t\n", 8},
		{"zero limit", "delete", 0},
		{"negative limit", "delete", -1},
		{"only stop words", "what is the", 8},
		{"no match", "kubernetes", 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ix.Search(tt.query, tt.limit); got != nil {
				t.Errorf("Search(%q, %d) = %v, want nil", tt.query, tt.limit, got)
			}
		})
	}
	if got := Build(nil, DefaultOptions()).Search("delete", 8); got != nil {
		t.Errorf("empty index: Search = %v, want nil", got)
	}
}

func TestSearchHonoursLimit(t *testing.T) {
	ix := Build(fileTools(), DefaultOptions())
	if all := ix.Search("file", 8); len(all) < 3 {
		t.Fatalf("Search(file, 8) = %v, want at least 3 hits", all)
	}
	got := ix.Search("file", 2)
	if diff := cmp.Diff(ids(ix.Search("file", 8))[:2], ids(got)); diff != "" {
		t.Errorf("limit 2 is not the head of limit 8 (-want +got):\n%s", diff)
	}
}

func TestSearchBreaksTiesByID(t *testing.T) {
	docs := []Doc{
		{ID: "mcp__c__ping", Name: "ping", Server: "c", Description: "Check the service is alive."},
		{ID: "mcp__a__ping", Name: "ping", Server: "a", Description: "Check the service is alive."},
		{ID: "mcp__b__ping", Name: "ping", Server: "b", Description: "Check the service is alive."},
	}
	input := slices.Clone(docs)
	ix := Build(docs, DefaultOptions())
	for _, q := range []string{"service alive", "ping"} {
		want := []string{"mcp__a__ping", "mcp__b__ping", "mcp__c__ping"}
		if diff := cmp.Diff(want, ids(ix.Search(q, 8))); diff != "" {
			t.Errorf("Search(%q) order (-want +got):\n%s", q, diff)
		}
	}
	if diff := cmp.Diff(input, docs); diff != "" {
		t.Errorf("Build changed the caller's slice (-before +after):\n%s", diff)
	}
}

func TestBuildKeepsTheFirstOfDuplicateIDs(t *testing.T) {
	ix := Build([]Doc{
		{ID: "mcp__a__t", Name: "t", Server: "a", Description: "alpha"},
		{ID: "mcp__a__t", Name: "t", Server: "a", Description: "omega"},
	}, DefaultOptions())
	if ix.Len() != 1 {
		t.Errorf("Len = %d, want 1", ix.Len())
	}
	if got := ix.Search("omega", 8); got != nil {
		t.Errorf("Search(omega) = %v, want nil: the duplicate should be dropped", got)
	}
	if got := ids(ix.Search("alpha", 8)); !slices.Equal(got, []string{"mcp__a__t"}) {
		t.Errorf("Search(alpha) = %v", got)
	}
}

// The requirement: exact tool names and names with separators
// changed rank first, even when other tools' text is all about the same
// words.
func TestExactAndNearExactNamesRankFirst(t *testing.T) {
	queries := []string{
		"write_file", "write-file", "writeFile", "write file", "WRITE_FILE", "write.file",
		"mcp__files__write_file", "files write_file", "files__write_file",
		"wirte_file",                    // one edit away
		"use write_file to store notes", // named inside a longer query
		"please write file notes.txt",
	}
	ix := Build(fileTools(), DefaultOptions())
	for _, q := range queries {
		if got := ids(ix.Search(q, 8)); len(got) == 0 || got[0] != "mcp__files__write_file" {
			t.Errorf("Search(%q) = %v, want mcp__files__write_file first", q, got)
		}
	}

	// Without name matching, BM25 alone prefers the decoys for some of
	// these: the feature is what makes the guarantee.
	opts := DefaultOptions()
	opts.NameMatch = false
	plain := Build(fileTools(), opts)
	misses := 0
	for _, q := range queries {
		if got := ids(plain.Search(q, 8)); len(got) == 0 || got[0] != "mcp__files__write_file" {
			misses++
		}
	}
	if misses == 0 {
		t.Error("without NameMatch every name query still ranks first; the decoys no longer test anything")
	}
}

func TestModelNamesInsidePunctuationRankFirst(t *testing.T) {
	ix := Build(fileTools(), DefaultOptions())
	for _, q := range []string{
		"call mcp__files__write_file(path=notes.txt)",
		"`mcp__files__write_file`, then read it back",
		"run \"files__write_file\": store notes",
		"is writeFile(path) the right one?",
	} {
		if got := ids(ix.Search(q, 8)); len(got) == 0 || got[0] != "mcp__files__write_file" {
			t.Errorf("Search(%q) = %v, want mcp__files__write_file first", q, got)
		}
	}
}

func TestSearchFillsTheLimitWithTheServersOtherTools(t *testing.T) {
	docs := []Doc{
		{ID: "mcp__git__git_status", Name: "git_status", Server: "git", Description: "Shows the working tree status"},
		{ID: "mcp__git__git_reset", Name: "git_reset", Server: "git", Description: "Unstages all staged changes"},
		{ID: "mcp__git__git_log", Name: "git_log", Server: "git", Description: "Shows the commit logs"},
		{ID: "mcp__web__fetch", Name: "fetch", Server: "web", Description: "Fetches a URL"},
	}
	ix := Build(docs, DefaultOptions())
	// Only git_reset holds a word of the query; a user who asked this
	// way may want a sibling, so the list is topped up with the other
	// tools of the same server, never another server's.
	want := []string{"mcp__git__git_reset", "mcp__git__git_log", "mcp__git__git_status"}
	if diff := cmp.Diff(want, ids(ix.Search("unstage", 8))); diff != "" {
		t.Errorf("Search(unstage, 8) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[:2], ids(ix.Search("unstage", 2))); diff != "" {
		t.Errorf("Search(unstage, 2) (-want +got):\n%s", diff)
	}
	if got := ix.Search("kubernetes", 8); got != nil {
		t.Errorf("Search(kubernetes) = %v, want nil: nothing matched, so nothing to fill from", ids(got))
	}
}

func TestSearchUnderstandsOtherWords(t *testing.T) {
	ix := Build(fileTools(), DefaultOptions())
	tests := []struct{ query, want string }{
		{"show me a picture", "mcp__files__image"},         // synonym
		{"remove a document", "mcp__files__delete_file"},   // synonyms
		{"list enviroment variabels", "mcp__files__env"},   // typos
		{"environment variables", "mcp__files__env"},       // stemming
		{"which env vars are set", "mcp__files__env"},      // abbreviations
		{"deleting files", "mcp__files__delete_file"},      // stemming
		{"getEnvironmentVariables", "mcp__files__env"},     // identifier split
		{"erase", "mcp__files__delete_file"},               // single synonym
		{"Return a small PNG image.", "mcp__files__image"}, // the description itself
	}
	for _, tt := range tests {
		if got := ids(ix.Search(tt.query, 8)); len(got) == 0 || got[0] != tt.want {
			t.Errorf("Search(%q) = %v, want %s first", tt.query, got, tt.want)
		}
	}
}

func TestServerInstructionsFindTheServersTools(t *testing.T) {
	ix := Build([]Doc{
		{ID: "mcp__k8s__apply", Name: "apply", Server: "k8s", Description: "Apply a manifest.", Instructions: "Tools for managing Kubernetes clusters."},
		{ID: "mcp__k8s__logs", Name: "logs", Server: "k8s", Description: "Read pod logs.", Instructions: "Tools for managing Kubernetes clusters."},
		{ID: "mcp__files__read", Name: "read", Server: "files", Description: "Read a file."},
	}, DefaultOptions())
	want := []string{"mcp__k8s__apply", "mcp__k8s__logs"}
	if diff := cmp.Diff(want, ids(ix.Search("kubernetes", 8))); diff != "" {
		t.Errorf("Search(kubernetes) (-want +got):\n%s", diff)
	}
	// The tool's own words outrank words it only shares through its
	// server's instructions.
	if got := ids(ix.Search("kubernetes logs", 8)); len(got) == 0 || got[0] != "mcp__k8s__logs" {
		t.Errorf("Search(kubernetes logs) = %v, want mcp__k8s__logs first", got)
	}
}

func TestSearchIsDeterministicAndSafeConcurrently(t *testing.T) {
	docs := synthCorpus(1000)
	queries := synthQueries(docs, 100)
	ix := Build(docs, DefaultOptions())
	want := make([][]Hit, len(queries))
	for i, q := range queries {
		want[i] = ix.Search(q, 8)
	}
	if diff := cmp.Diff(want, func() [][]Hit {
		again := Build(docs, DefaultOptions())
		out := make([][]Hit, len(queries))
		for i, q := range queries {
			out[i] = again.Search(q, 8)
		}
		return out
	}()); diff != "" {
		t.Fatalf("a second Build ranks differently (-first +second):\n%s", diff)
	}

	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := range queries {
				j := (i + w*13) % len(queries)
				if got := ix.Search(queries[j], 8); !cmp.Equal(want[j], got) {
					errs <- fmt.Sprintf("worker %d: Search(%q) = %v, want %v", w, queries[j], got, want[j])
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// In a 10 000-tool catalog whose tool names share a small vocabulary,
// every tool is still found first by its name in any separator style, by
// its flat name and by "server name".
func TestExactNamesRankFirstAtScale(t *testing.T) {
	docs := synthCorpus(benchTools)
	ix := Build(docs, DefaultOptions())
	opts := DefaultOptions()
	opts.NameMatch = false
	withoutNames := Build(docs, opts)

	type probe struct {
		query string
		ok    func(top string) bool
	}
	var probes []probe
	for i := 0; i < len(docs); i += 125 {
		d := docs[i]
		byName := func(top string) bool {
			// Another server may have a tool of the same name: any of
			// them is a correct first answer to the bare name.
			j := slices.IndexFunc(docs, func(x Doc) bool { return x.ID == top })
			return j >= 0 && nameKey(docs[j].Name) == nameKey(d.Name)
		}
		exactly := func(top string) bool { return top == d.ID }
		words := strings.Fields(d.Title)
		probes = append(probes,
			probe{d.Name, byName},
			probe{styleName(words, 0), byName},
			probe{styleName(words, 2), byName},
			probe{strings.Join(words, " "), byName},
			probe{d.ID, exactly},
			probe{d.Server + " " + d.Name, exactly},
		)
	}
	missed, missedWithout := 0, 0
	for _, p := range probes {
		if got := ix.Search(p.query, 8); len(got) == 0 || !p.ok(got[0].ID) {
			missed++
			if missed <= 5 {
				t.Errorf("Search(%q) = %v, want the named tool first", p.query, ids(got))
			}
		}
		if got := withoutNames.Search(p.query, 8); len(got) == 0 || !p.ok(got[0].ID) {
			missedWithout++
		}
	}
	t.Logf("name queries at rank 1 over %d tools: %d/%d with NameMatch, %d/%d without",
		len(docs), len(probes)-missed, len(probes), len(probes)-missedWithout, len(probes))
	if missed > 0 {
		t.Errorf("%d of %d name queries not at rank 1", missed, len(probes))
	}
}
