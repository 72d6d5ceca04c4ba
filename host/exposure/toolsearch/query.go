package toolsearch

import (
	"cmp"
	"slices"
	"unicode/utf8"
)

// weightedTerm is one term of a query with its weight: 1 per time the
// query states it, less for a typo correction, synonym or trigram.
type weightedTerm struct {
	term   uint32
	weight float64
}

// queryTerms analyzes query into indexed terms: first the words it
// states, then corrections of words no document contains, then synonyms.
// An expansion never outweighs a stated word.
func (ix *Index) queryTerms(query string) []weightedTerm {
	type word struct{ surface, term string }
	var stated []word
	eachWord(query, ix.opts.SplitIdentifiers, func(w string) {
		if term, ok := analyze(w, ix.opts); ok {
			stated = append(stated, word{w, term})
		}
	})
	var out []weightedTerm
	find := func(id uint32) int {
		return slices.IndexFunc(out, func(t weightedTerm) bool { return t.term == id })
	}
	for _, w := range stated {
		id, ok := ix.terms[w.term]
		if !ok {
			continue
		}
		if i := find(id); i >= 0 {
			out[i].weight++
		} else {
			out = append(out, weightedTerm{id, 1})
		}
	}
	statedCount := len(out)
	expand := func(id uint32, weight float64) {
		i := find(id)
		switch {
		case i < 0:
			out = append(out, weightedTerm{id, weight})
		case i >= statedCount && out[i].weight < weight:
			out[i].weight = weight
		}
	}
	for _, w := range stated {
		if _, ok := ix.terms[w.term]; !ok && ix.opts.Typos && utf8.RuneCountInString(w.surface) >= minTypoLen {
			for _, id := range ix.nearWords(w.surface) {
				expand(id, typoWeight)
			}
		}
		for _, t := range ix.synonyms[w.term] {
			expand(t.term, t.weight)
		}
	}
	// Summation order decides the last bits of a score: fix it.
	slices.SortFunc(out, func(a, b weightedTerm) int { return cmp.Compare(a.term, b.term) })
	return out
}

// nearWords returns the terms of indexed words one edit away from word.
func (ix *Index) nearWords(word string) []uint32 {
	var ids []uint32
	for n := len(word) - 1; n <= len(word)+1 && n < len(ix.surfaces); n++ {
		for _, s := range ix.surfaces[n] {
			if withinOneEdit(word, s.word) && !slices.Contains(ids, s.term) {
				ids = append(ids, s.term)
			}
		}
	}
	return ids
}

// queryGrams lists the trigrams of the query's words. Each word spreads a
// total weight of one over its trigrams, so long words do not dominate.
func (ix *Index) queryGrams(query string) []weightedTerm {
	var out []weightedTerm
	eachWord(query, ix.opts.SplitIdentifiers, func(w string) {
		if isStopWord(w) {
			return
		}
		var grams []string
		eachGram(w, func(g string) { grams = append(grams, g) })
		for _, g := range grams {
			id, ok := ix.gramTerms[g]
			if !ok {
				continue
			}
			weight := 1 / float64(len(grams))
			if i := slices.IndexFunc(out, func(t weightedTerm) bool { return t.term == id }); i >= 0 {
				out[i].weight += weight
			} else {
				out = append(out, weightedTerm{id, weight})
			}
		}
	})
	slices.SortFunc(out, func(a, b weightedTerm) int { return cmp.Compare(a.term, b.term) })
	return out
}
