package toolsearch

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokenize turns text into the terms the index stores and queries with:
// words (split at identifier boundaries when opts.SplitIdentifiers is
// set), lowercased, without English stop words, stemmed when
// opts.Stemming is set. Documents and queries go through the same
// function, so a term in a query can only ever match the same term in a
// document.
func Tokenize(s string, opts Options) []string {
	var terms []string
	eachWord(s, opts.SplitIdentifiers, func(word string) {
		if term, ok := analyze(word, opts); ok {
			terms = append(terms, term)
		}
	})
	return terms
}

// analyze maps one lowercase word to its term; ok is false for stop words.
func analyze(word string, opts Options) (term string, ok bool) {
	if isStopWord(word) {
		return "", false
	}
	if opts.Stemming {
		return stem(word), true
	}
	return word, true
}

// eachWord calls fn with every lowercase word of s. A word is a run of
// letters and digits; without split, underscores join words too (the
// Unicode word-boundary rule most tokenizers follow, which keeps
// "write_file" whole). With split, a word also ends where the case drops
// ("writeFile" → write, file; "HTTPServer" → http, server) and where
// letters meet digits ("gen00042" → gen, 00042).
func eachWord(s string, split bool, fn func(word string)) {
	start := -1
	var prev rune
	emit := func(end int) {
		if start >= 0 && end > start {
			fn(strings.ToLower(s[start:end]))
		}
		start = -1
	}
	for i, r := range s {
		inWord := unicode.IsLetter(r) || unicode.IsDigit(r) || (!split && r == '_')
		if !inWord {
			emit(i)
			prev = r
			continue
		}
		if start >= 0 && split && boundary(prev, r, s[i+utf8.RuneLen(r):]) {
			emit(i)
		}
		if start < 0 {
			start = i
		}
		prev = r
	}
	emit(len(s))
}

// boundary reports whether an identifier word ends between prev and r;
// rest is the text after r, needed to split an acronym from the word that
// follows it ("HTTPServer": the boundary is before "S" because "e"
// follows).
func boundary(prev, r rune, rest string) bool {
	switch {
	case unicode.IsDigit(prev) != unicode.IsDigit(r):
		return true
	case unicode.IsLower(prev) && unicode.IsUpper(r):
		return true
	case unicode.IsUpper(prev) && unicode.IsUpper(r):
		next, _ := utf8.DecodeRuneInString(rest)
		return unicode.IsLower(next)
	}
	return false
}

// nameKey is the spelling of a name with every separator and case
// difference removed: "write_file", "write-file", "writeFile" and
// "Write File" all have the key "writefile". Two strings with the same key
// name the same thing as far as a person typing a query is concerned.
func nameKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// isStopWord reports whether word is an English function word: such words
// occur in almost every description and say nothing about what a tool
// does. The list is the usual closed class (articles, pronouns,
// auxiliaries, prepositions, conjunctions) plus the contraction fragments
// left by splitting at apostrophes ("don't" → don, t) and the politeness
// words of requests.
func isStopWord(word string) bool {
	switch word {
	case "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are",
		"as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by",
		"can", "could", "d", "did", "do", "does", "doing", "don", "down", "during", "each", "few", "for",
		"from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him",
		"himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "kindly",
		"ll", "m", "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "o", "of", "off",
		"on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "please",
		"re", "s", "same", "she", "should", "so", "some", "such", "t", "than", "that", "the", "their",
		"theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through",
		"to", "too", "under", "until", "up", "us", "ve", "very", "was", "we", "were", "what", "when",
		"where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours",
		"yourself", "yourselves":
		return true
	}
	return false
}
