package toolsearch

import (
	"cmp"
	"math"
	"slices"
)

// postings is an inverted index: for each interned term, the documents
// that contain it with the term's precomputed BM25 weight in each. All
// postings live in three flat arrays, so the index is a handful of
// allocations however many tools it holds.
type postings struct {
	start  []uint32  // term t's postings are docs[start[t]:start[t+1]]
	docs   []uint32  // ascending within a term
	impact []float32 // BM25 term-frequency part for (term, doc)
	idf    []float32
	k1     float64
}

// accumulate adds weight × BM25(term, d) to scores[d] for every document
// d that holds term, records newly scored documents in touched, and
// returns the most any document can have gained.
func (p *postings) accumulate(term uint32, weight float64, scores []float64, touched *[]uint32) float64 {
	if int(term)+1 >= len(p.start) {
		return 0
	}
	idf := float64(p.idf[term]) * weight
	for i := p.start[term]; i < p.start[term+1]; i++ {
		d := p.docs[i]
		if scores[d] == 0 {
			*touched = append(*touched, d)
		}
		scores[d] += idf * float64(p.impact[i])
	}
	return idf * (p.k1 + 1)
}

// postingBuilder collects term frequencies document by document.
// Several builders may share one term dictionary.
type postingBuilder struct {
	terms   *dictionary
	current map[uint32]float64 // the document being added
	perDoc  [][]termFreq
	lengths []float64
}

// dictionary interns terms: each distinct term string is stored once and
// known by its ordinal everywhere else.
type dictionary struct {
	ids map[string]uint32
}

func (d *dictionary) intern(term string) uint32 {
	id, ok := d.ids[term]
	if !ok {
		id = uint32(len(d.ids))
		d.ids[term] = id
	}
	return id
}

type termFreq struct {
	term uint32
	tf   float64
}

func newPostingBuilder(terms *dictionary) *postingBuilder {
	return &postingBuilder{terms: terms, current: map[uint32]float64{}}
}

// add counts one occurrence of term in the current document, weighted.
func (b *postingBuilder) add(term uint32, weight float64) {
	b.current[term] += weight
}

// endDoc closes the current document; documents are numbered in the
// order they end.
func (b *postingBuilder) endDoc() {
	tfs := make([]termFreq, 0, len(b.current))
	length := 0.0
	for id, tf := range b.current {
		tfs = append(tfs, termFreq{id, tf})
		length += tf
	}
	slices.SortFunc(tfs, func(a, b termFreq) int { return cmp.Compare(a.term, b.term) })
	b.perDoc = append(b.perDoc, tfs)
	b.lengths = append(b.lengths, length)
	clear(b.current)
}

// finish lays the postings out flat and precomputes each posting's BM25
// term-frequency part, tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen)), so a
// query only multiplies and adds.
func (b *postingBuilder) finish(k1, bParam float64) postings {
	n := len(b.perDoc)
	nTerms := len(b.terms.ids)
	df := make([]uint32, nTerms)
	total, sumLen := 0, 0.0
	for d, tfs := range b.perDoc {
		for _, t := range tfs {
			df[t.term]++
		}
		total += len(tfs)
		sumLen += b.lengths[d]
	}
	avgLen := 1.0
	if n > 0 && sumLen > 0 {
		avgLen = sumLen / float64(n)
	}
	p := postings{
		start:  make([]uint32, nTerms+1),
		docs:   make([]uint32, total),
		impact: make([]float32, total),
		idf:    make([]float32, nTerms),
		k1:     k1,
	}
	for t, f := range df {
		p.start[t+1] = p.start[t] + f
		// The Lucene form of IDF: never negative, even for a term in
		// every document.
		p.idf[t] = float32(math.Log(1 + (float64(n)-float64(f)+0.5)/(float64(f)+0.5)))
	}
	next := slices.Clone(p.start[:nTerms])
	for d, tfs := range b.perDoc {
		norm := k1 * (1 - bParam + bParam*b.lengths[d]/avgLen)
		for _, t := range tfs {
			i := next[t.term]
			next[t.term]++
			p.docs[i] = uint32(d)
			p.impact[i] = float32(t.tf * (k1 + 1) / (t.tf + norm))
		}
	}
	return p
}

// topK keeps the limit best (score, doc) pairs seen, as a min-heap whose
// root is the worst kept: lower score, or equal score and larger ordinal
// (later ID).
type topK struct {
	limit int
	heap  []ranked
}

type ranked struct {
	doc   uint32
	score float64
}

func worse(a, b ranked) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.doc > b.doc
}

func (t *topK) offer(doc uint32, score float64) {
	r := ranked{doc, score}
	if len(t.heap) < t.limit {
		t.heap = append(t.heap, r)
		for i := len(t.heap) - 1; i > 0; {
			parent := (i - 1) / 2
			if !worse(t.heap[i], t.heap[parent]) {
				break
			}
			t.heap[i], t.heap[parent] = t.heap[parent], t.heap[i]
			i = parent
		}
		return
	}
	if !worse(t.heap[0], r) {
		return
	}
	t.heap[0] = r
	for i := 0; ; {
		least := i
		if c := 2*i + 1; c < len(t.heap) && worse(t.heap[c], t.heap[least]) {
			least = c
		}
		if c := 2*i + 2; c < len(t.heap) && worse(t.heap[c], t.heap[least]) {
			least = c
		}
		if least == i {
			return
		}
		t.heap[i], t.heap[least] = t.heap[least], t.heap[i]
		i = least
	}
}

// sorted returns the kept pairs best first.
func (t *topK) sorted() []ranked {
	out := slices.Clone(t.heap)
	slices.SortFunc(out, func(a, b ranked) int {
		switch {
		case worse(b, a):
			return -1
		case worse(a, b):
			return 1
		}
		return 0
	})
	return out
}
