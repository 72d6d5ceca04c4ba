// Command wordnet regenerates the toolsearch package's thesaurus
// (wordnet.txt.gz) from the WordNet 3.0 database, so the synonym table
// beyond the hand-written one comes from a general thesaurus and not from
// the queries it is measured on.
//
//	apt-get install wordnet-base   # the database, in /usr/share/wordnet
//	go run ./host/exposure/toolsearch/testdata/wordnet \
//	    -dict /usr/share/wordnet -out host/exposure/toolsearch/wordnet.txt.gz
//
// Output: one synset a line, its one-word members as "word/rank", where
// rank is how common that sense of the word is among the word's senses
// (1 = its most common). Only senses seen in WordNet's sense-tagged
// corpora are kept (rare senses and rare words make noisy synonyms), and
// only synsets left with two members or more.
package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

func main() {
	dict := flag.String("dict", "/usr/share/wordnet", "directory of the WordNet database files")
	out := flag.String("out", "wordnet.txt.gz", "file to write")
	maxRank := flag.Int("max-rank", 5, "keep the senses of a word up to this rank")
	flag.BoolVar(&requireTagged, "tagged", true, "keep only senses seen in the sense-tagged corpora")
	flag.Parse()
	if err := run(*dict, *out, *maxRank); err != nil {
		fmt.Fprintln(os.Stderr, "wordnet:", err)
		os.Exit(1)
	}
}

type member struct {
	word string
	rank int
}

var requireTagged bool

func run(dict, out string, maxRank int) error {
	// synset (pos + offset) → its members whose sense is common enough.
	synsets := map[string][]member{}
	for _, pos := range []string{"noun", "verb", "adj"} {
		f, err := os.Open(filepath.Join(dict, "index."+pos))
		if err != nil {
			return fmt.Errorf("open the WordNet index (apt-get install wordnet-base): %w", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, " ") {
				continue // licence header
			}
			fields := strings.Fields(line)
			word := fields[0]
			if !plainWord(word) {
				continue
			}
			// lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt offsets...
			pCnt, _ := strconv.Atoi(fields[3])
			i := 4 + pCnt
			tagged, _ := strconv.Atoi(fields[i+1])
			offsets := fields[i+2:]
			for r, off := range offsets {
				if (requireTagged && r >= tagged) || r >= maxRank {
					break
				}
				key := pos[:1] + off
				synsets[key] = append(synsets[key], member{word, r + 1})
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return err
		}
	}
	var lines []string
	for _, ms := range synsets {
		if len(ms) < 2 {
			continue
		}
		slices.SortFunc(ms, func(a, b member) int { return strings.Compare(a.word, b.word) })
		parts := make([]string, len(ms))
		for i, m := range ms {
			parts[i] = fmt.Sprintf("%s/%d", m.word, m.rank)
		}
		lines = append(lines, strings.Join(parts, " "))
	}
	slices.Sort(lines)
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	for _, l := range lines {
		fmt.Fprintln(zw, l)
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// plainWord keeps lowercase one-word lemmas: no collocations
// ("take_off"), proper names or abbreviations with dots.
func plainWord(w string) bool {
	if len(w) < 2 {
		return false
	}
	for _, r := range w {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}
