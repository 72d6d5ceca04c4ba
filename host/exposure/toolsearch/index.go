package toolsearch

import (
	"cmp"
	"slices"
	"strings"
	"sync"
)

// Doc is one deferred tool as the index sees it.
type Doc struct {
	// ID is the flat model name, e.g. "mcp__files__write_file". IDs are
	// unique; Build keeps the first of any duplicates.
	ID string
	// Name is the raw tool name as the server lists it.
	Name   string
	Server string
	Title  string
	// Description is the tool's description.
	Description string
	// Instructions are the owning server's instructions, shared by all of
	// its tools.
	Instructions string
	// Properties are the top-level input property names.
	Properties []string
}

// Options switches the ranking features on and off, so the quality test
// can measure what each one buys. The zero value is plain BM25 over words
// split at punctuation: the baseline. DefaultOptions is what we ship.
type Options struct {
	// Stemming reduces words to their English (Porter) stems, so
	// "compression" finds "compresses".
	Stemming bool
	// SplitIdentifiers splits snake_case, kebab-case, camelCase, dotted
	// names and letter/digit boundaries into words, so "get-env" and
	// "getEnv" both contain "env". Without it underscores join words.
	SplitIdentifiers bool
	// Typos lets a query word of at least 5 letters that no document
	// contains match the document words one edit away (insert, delete,
	// substitute or swap two neighbours), at a lower weight.
	Typos bool
	// Synonyms expands query words with a small hand-written table of
	// general tool vocabulary (get/fetch/retrieve, image/picture/photo,
	// delete/remove/erase …), at a lower weight. See synonymGroups.
	Synonyms bool
	// NGrams adds a score over character trigrams of words, which matches
	// abbreviations and partial words ("img", "elicit" in "elicitation").
	NGrams bool
	// NameMatch ranks tools whose name the query spells first: the exact
	// raw name, flat name or "server name", with separators or case
	// changed ("write-file", "writeFile", "write file", "files
	// write_file"), or one edit away. An identifier spelled inside a longer
	// query ranks its tool above plain word matches too.
	NameMatch bool
	// FieldWeights counts a word of the server's instructions, which all
	// of its tools share, a quarter of a word of the tool's own text.
	// (Boosting name, title or property words over the description was
	// measured too and bought nothing.)
	FieldWeights bool
	// Fill tops a list shorter than the limit up with the other tools of
	// the servers already in it, best-ranked server first: a task's
	// tools usually sit together, and a short list hides the right one
	// when the query's words missed it.
	Fill bool
	// NameWeight and PropertyWeight count a word of the tool's names
	// (flat, raw, title) and of its input property names as that many
	// words of its description (BM25F: the weighted count saturates, and
	// it is the document's length too). Zero (or less) means 1.
	NameWeight, PropertyWeight float64
	// K1 and B are the BM25 parameters: K1 saturates repeated words, B
	// normalizes document length. Zero (or less) means 1.2 and 0.75.
	K1, B float64
}

// DefaultOptions is the configuration we ship: every feature that earned
// its place in the quality test (see quality_test.go for the numbers).
// NGrams is off: on the labelled queries it moved one query to rank 1 and
// none into the top 8, for about three times the index memory and twice
// the query time.
func DefaultOptions() Options {
	return Options{
		Stemming:         true,
		SplitIdentifiers: true,
		Typos:            true,
		Synonyms:         true,
		NameMatch:        true,
		FieldWeights:     true,
		NameWeight:       0.5,
		PropertyWeight:   0.5,
		Fill:             true,
	}
}

// Weights of the features relative to a word the query states itself.
const (
	typoWeight    = 0.7
	synonymWeight = 0.5
	ngramWeight   = 0.3
	// instructionWeight is a server-instruction word's weight with
	// Options.FieldWeights; a word of the tool's own text counts 1.
	instructionWeight = 0.25

	// minTypoLen is the shortest query word tolerated as a typo; shorter
	// words have too many neighbours one edit away.
	minTypoLen = 5
	// minNameTypoLen is the shortest name key matched one edit away.
	minNameTypoLen = 6
	// maxNameSpan is the most query words one spelled name may take.
	maxNameSpan = 4
)

// Hit is one ranked tool.
type Hit struct {
	ID string
	// Score is the tool's relevance; it is comparable only within one
	// result list.
	Score float64
	// Named is set when the query names the tool (Options.NameMatch).
	Named bool
}

// Index ranks a fixed set of tool documents. Build it once per catalog
// revision; it is immutable afterwards and safe for concurrent Search.
type Index struct {
	opts Options
	ids  []string // document ordinal → ID, ascending, so ties break by ID

	terms map[string]uint32 // every indexed word's term → ordinal
	words postings          // tool fields, one document per tool

	// Server instructions are indexed once per server, as documents of
	// their own: a server's score for a query flows to each of its tools
	// (instructionWeight). Copying them into every tool would multiply
	// the index by the server's tool count and make their words look
	// common, however rare they are among servers.
	servers           postings
	serverTools       [][]uint32 // server document → its tools
	serverOf          []uint32   // tool → its server document
	instructionWeight float64

	grams     postings // trigrams of tool fields; only with opts.NGrams
	gramTerms map[string]uint32

	// surfaces lists every indexed word as written (lowercase, unstemmed)
	// by byte length, for typo matching.
	surfaces [][]surfaceWord
	// synonyms maps a query term to the indexed terms of its groups, with
	// their weight.
	synonyms map[string][]weightedTerm
	names    nameIndex // only with opts.NameMatch

	scratch sync.Pool // *scratch, one per concurrent Search
}

type surfaceWord struct {
	word string
	term uint32
}

// scratch holds one search's score accumulators. Only touched entries are
// non-zero, and they are zeroed again before the scratch is reused.
type scratch struct {
	scores         []float64 // per tool
	touched        []uint32
	serverScores   []float64 // per server document
	touchedServers []uint32
}

// Build indexes docs with opts. The work is proportional to the total text;
// do it once per catalog revision, not per query.
func Build(docs []Doc, opts Options) *Index {
	if opts.K1 <= 0 {
		opts.K1 = 1.2
	}
	if opts.B <= 0 {
		opts.B = 0.75
	}
	sorted := slices.Clone(docs)
	slices.SortStableFunc(sorted, func(a, b Doc) int { return strings.Compare(a.ID, b.ID) })
	sorted = slices.CompactFunc(sorted, func(a, b Doc) bool { return a.ID == b.ID })

	ix := &Index{opts: opts, ids: make([]string, len(sorted)), instructionWeight: 1}
	dict := &dictionary{ids: map[string]uint32{}}
	words := newPostingBuilder(dict)
	servers := newPostingBuilder(dict)
	gramDict := &dictionary{ids: map[string]uint32{}}
	grams := newPostingBuilder(gramDict)

	// A catalog repeats few distinct words many times: analyze each once.
	type analyzedWord struct {
		term  uint32
		index bool // false for stop words
	}
	seen := map[string]analyzedWord{}
	addText := func(text string, weight float64, to *postingBuilder, withGrams bool) {
		eachWord(text, opts.SplitIdentifiers, func(word string) {
			a, ok := seen[word]
			if !ok {
				term, index := analyze(word, opts)
				if index {
					a = analyzedWord{dict.intern(term), true}
					for len(ix.surfaces) <= len(word) {
						ix.surfaces = append(ix.surfaces, nil)
					}
					ix.surfaces[len(word)] = append(ix.surfaces[len(word)], surfaceWord{word, a.term})
				}
				seen[word] = a
			}
			if !a.index {
				return
			}
			to.add(a.term, weight)
			if withGrams && opts.NGrams {
				eachGram(word, func(g string) { grams.add(gramDict.intern(g), 1) })
			}
		})
	}

	serverOf := map[[2]string]uint32{}
	for d, doc := range sorted {
		ix.ids[d] = doc.ID
		for _, f := range toolText(doc, opts) {
			addText(f.text, f.weight, words, true)
		}
		words.endDoc()
		grams.endDoc()

		key := [2]string{doc.Server, doc.Instructions}
		s, ok := serverOf[key]
		if !ok {
			s = uint32(len(ix.serverTools))
			serverOf[key] = s
			ix.serverTools = append(ix.serverTools, nil)
			addText(doc.Instructions, 1, servers, false)
			servers.endDoc()
		}
		ix.serverTools[s] = append(ix.serverTools[s], uint32(d))
		ix.serverOf = append(ix.serverOf, s)
	}
	ix.terms = dict.ids
	ix.words = words.finish(opts.K1, opts.B)
	ix.servers = servers.finish(opts.K1, opts.B)
	if opts.FieldWeights {
		ix.instructionWeight = instructionWeight
	}
	if opts.NGrams {
		ix.grams = grams.finish(opts.K1, opts.B)
		ix.gramTerms = gramDict.ids
	}
	if opts.Synonyms {
		ix.synonyms = buildSynonyms(ix.terms, opts)
	}
	if opts.NameMatch {
		ix.names = buildNameIndex(sorted)
	}
	nTools, nServers := len(sorted), len(ix.serverTools)
	ix.scratch.New = func() any {
		return &scratch{scores: make([]float64, nTools), serverScores: make([]float64, nServers)}
	}
	return ix
}

// Len is the number of indexed documents.
func (ix *Index) Len() int { return len(ix.ids) }

// field is one searchable text of a tool and the weight of its words.
type field struct {
	text   string
	weight float64
}

// toolText lists what a tool is searched by, besides its server's
// instructions, with opts' field weights.
func toolText(d Doc, opts Options) []field {
	name, props := 1.0, 1.0
	if opts.NameWeight > 0 {
		name = opts.NameWeight
	}
	if opts.PropertyWeight > 0 {
		props = opts.PropertyWeight
	}
	return []field{
		{d.ID, name}, {d.Name, name}, {d.Server, 1}, {d.Title, name},
		{d.Description, 1}, {strings.Join(d.Properties, " "), props},
	}
}

// eachGram calls fn with the character trigrams of word, marked at the
// word's edges so that prefixes count ("^im", "img", "mg$").
func eachGram(word string, fn func(gram string)) {
	runes := []rune("^" + word + "$")
	for i := 0; i+3 <= len(runes); i++ {
		fn(string(runes[i : i+3]))
	}
}

// buildSynonyms resolves the synonym table to indexed terms; a group
// word that no document uses cannot help ranking and is left out. Where
// two groups relate two words, the higher weight counts.
func buildSynonyms(terms map[string]uint32, opts Options) map[string][]weightedTerm {
	out := map[string][]weightedTerm{}
	add := func(groups [][]string, weight float64) {
		for _, group := range groups {
			var groupTerms []string
			for _, w := range group {
				// A word that splits ("mp3" → mp, 3) would make its
				// fragments synonyms of the group: leave it out.
				if terms := Tokenize(w, opts); len(terms) == 1 {
					groupTerms = append(groupTerms, terms[0])
				}
			}
			for _, from := range groupTerms {
				for _, to := range groupTerms {
					id, ok := terms[to]
					if !ok || to == from {
						continue
					}
					i := slices.IndexFunc(out[from], func(t weightedTerm) bool { return t.term == id })
					switch {
					case i < 0:
						out[from] = append(out[from], weightedTerm{id, weight})
					case out[from][i].weight < weight:
						out[from][i].weight = weight
					}
				}
			}
		}
	}
	if opts.Synonyms {
		add(synonymGroups(), synonymWeight)
	}
	for _, ts := range out {
		slices.SortFunc(ts, func(a, b weightedTerm) int { return cmp.Compare(a.term, b.term) })
	}
	return out
}

// Search ranks the indexed tools for query and returns at most limit
// hits, best first; ties break by ID. An empty query, a limit below one or
// a query that matches nothing returns nil.
func (ix *Index) Search(query string, limit int) []Hit {
	query = strings.TrimSpace(query)
	if query == "" || limit <= 0 || len(ix.ids) == 0 {
		return nil
	}
	sc := ix.scratch.Get().(*scratch)
	defer ix.putScratch(sc)

	var upper float64 // bound on the text score, so name tiers stay above it
	var serverUpper float64
	for _, qt := range ix.queryTerms(query) {
		upper += ix.words.accumulate(qt.term, qt.weight, sc.scores, &sc.touched)
		serverUpper += ix.servers.accumulate(qt.term, qt.weight, sc.serverScores, &sc.touchedServers)
	}
	for _, s := range sc.touchedServers {
		gain := ix.instructionWeight * sc.serverScores[s]
		for _, d := range ix.serverTools[s] {
			if sc.scores[d] == 0 {
				sc.touched = append(sc.touched, d)
			}
			sc.scores[d] += gain
		}
	}
	upper += ix.instructionWeight * serverUpper
	if ix.opts.NGrams {
		for _, qt := range ix.queryGrams(query) {
			upper += ix.grams.accumulate(qt.term, qt.weight*ngramWeight, sc.scores, &sc.touched)
		}
	}
	var tiers map[uint32]int
	if ix.opts.NameMatch {
		tiers = ix.names.tiers(query)
		for d := range tiers {
			if sc.scores[d] == 0 {
				sc.touched = append(sc.touched, d)
			}
		}
	}

	top := topK{limit: limit}
	for _, d := range sc.touched {
		s := sc.scores[d] + float64(tiers[d])*(upper+1)
		if s > 0 {
			top.offer(d, s)
		}
	}
	ranked := top.sorted()
	if len(ranked) == 0 {
		return nil
	}
	if ix.opts.Fill && len(ranked) < limit {
		ranked = ix.fill(ranked, limit)
	}
	hits := make([]Hit, len(ranked))
	for i, r := range ranked {
		hits[i] = Hit{ID: ix.ids[r.doc], Score: r.score, Named: tiers[r.doc] > 0}
	}
	return hits
}

// fill appends to list, until it holds limit tools, the tools of the
// servers of list that it does not hold yet: servers in the order of
// their best tool, tools by ID. They score zero: below every match.
func (ix *Index) fill(list []ranked, limit int) []ranked {
	have := make(map[uint32]bool, limit)
	for _, r := range list {
		have[r.doc] = true
	}
	var servers []uint32
	for _, r := range list {
		if s := ix.serverOf[r.doc]; !slices.Contains(servers, s) {
			servers = append(servers, s)
		}
	}
	for _, s := range servers {
		for _, d := range ix.serverTools[s] {
			if len(list) == limit {
				return list
			}
			if !have[d] {
				have[d] = true
				list = append(list, ranked{doc: d})
			}
		}
	}
	return list
}

func (ix *Index) putScratch(sc *scratch) {
	for _, d := range sc.touched {
		sc.scores[d] = 0
	}
	for _, s := range sc.touchedServers {
		sc.serverScores[s] = 0
	}
	sc.touched = sc.touched[:0]
	sc.touchedServers = sc.touchedServers[:0]
	ix.scratch.Put(sc)
}
