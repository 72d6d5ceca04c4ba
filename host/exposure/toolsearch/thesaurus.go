package toolsearch

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"strconv"
	"strings"
	"sync"
)

// wordnetData is a general English thesaurus drawn from WordNet 3.0 (see
// WORDNET-LICENSE and testdata/wordnet): one synset a line, its one-word
// members as "word/rank", rank being how common that sense is among the
// word's senses (1 = the most common). About 30 KB compressed.
//
//go:embed wordnet.txt.gz
var wordnetData []byte

// thesaurusGroup is one synset: its words and the rank of the synset's
// sense for each.
type thesaurusGroup struct {
	words []string
	ranks []uint8
}

// thesaurus decodes wordnetData once per process.
var thesaurus = sync.OnceValue(func() []thesaurusGroup {
	zr, err := gzip.NewReader(bytes.NewReader(wordnetData))
	if err != nil {
		panic("toolsearch: the embedded thesaurus is corrupt: " + err.Error())
	}
	var groups []thesaurusGroup
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		var g thesaurusGroup
		for _, m := range strings.Fields(sc.Text()) {
			word, rank, _ := strings.Cut(m, "/")
			r, _ := strconv.Atoi(rank)
			g.words = append(g.words, word)
			g.ranks = append(g.ranks, uint8(r))
		}
		groups = append(groups, g)
	}
	if err := sc.Err(); err != nil {
		panic("toolsearch: the embedded thesaurus is corrupt: " + err.Error())
	}
	return groups
})

// thesaurusGroups returns the synsets restricted to the senses of rank at
// most maxRank, as word lists like synonymGroups.
func thesaurusGroups(maxRank int) [][]string {
	var out [][]string
	for _, g := range thesaurus() {
		var words []string
		for i, w := range g.words {
			if int(g.ranks[i]) <= maxRank {
				words = append(words, w)
			}
		}
		if len(words) >= 2 {
			out = append(out, words)
		}
	}
	return out
}
