package toolsearch

import (
	"slices"
	"strings"
	"unicode"
)

// nameIndex finds tools by name key (see nameKey): the raw name, the
// server name followed by the raw name, and the flat model name of every
// tool. Most keys belong to one tool, so a key maps straight to its
// document; the few shared keys ("echo" on two servers) point into
// shared.
type nameIndex struct {
	keys   map[string]uint32 // key → document, or sharedFlag|index into shared
	shared [][]uint32
	// byLen holds every key by byte length, for one-edit matching.
	byLen [][]string
}

// sharedFlag marks a nameIndex value that indexes shared, not a document.
const sharedFlag = 1 << 31

func buildNameIndex(docs []Doc) nameIndex {
	all := map[string][]uint32{}
	for d, doc := range docs {
		for _, key := range []string{nameKey(doc.Name), nameKey(doc.Server + doc.Name), nameKey(doc.ID)} {
			if key != "" && !slices.Contains(all[key], uint32(d)) {
				all[key] = append(all[key], uint32(d))
			}
		}
	}
	n := nameIndex{keys: make(map[string]uint32, len(all))}
	for key, ds := range all {
		if len(ds) == 1 {
			n.keys[key] = ds[0]
		} else {
			n.keys[key] = sharedFlag | uint32(len(n.shared))
			n.shared = append(n.shared, ds)
		}
		for len(n.byLen) <= len(key) {
			n.byLen = append(n.byLen, nil)
		}
		n.byLen[len(key)] = append(n.byLen[len(key)], key)
	}
	for _, keys := range n.byLen {
		slices.Sort(keys)
	}
	return n
}

// lookup returns the documents whose name key is key.
func (n *nameIndex) lookup(key string) []uint32 {
	v, ok := n.keys[key]
	switch {
	case !ok:
		return nil
	case v&sharedFlag != 0:
		return n.shared[v&^sharedFlag]
	}
	return []uint32{v}
}

// tiers finds the tools the query names. Tier 2: the whole query is a
// tool's name key. Tier 1: the whole query is one edit from a name key, or
// a run of query words that forms an identifier or several words ("use
// write_file", "please write file notes.txt") is one.
func (n *nameIndex) tiers(query string) map[uint32]int {
	tiers := map[uint32]int{}
	raise := func(docs []uint32, tier int) {
		for _, d := range docs {
			if tiers[d] < tier {
				tiers[d] = tier
			}
		}
	}
	whole := nameKey(query)
	if docs := n.lookup(whole); docs != nil {
		raise(docs, 2)
	} else if len(whole) >= minNameTypoLen {
		for l := len(whole) - 1; l <= len(whole)+1 && l < len(n.byLen); l++ {
			for _, key := range n.byLen[l] {
				if withinOneEdit(whole, key) {
					raise(n.lookup(key), 1)
				}
			}
		}
	}
	// An identifier wrapped in punctuation ("mcp__files__write_file(…)",
	// "`write_file`,") names its tool too.
	for _, ident := range strings.FieldsFunc(query, notIdentifierRune) {
		if strings.ContainsAny(ident, "_-.") || strings.IndexFunc(ident, unicode.IsUpper) > 0 {
			raise(n.lookup(nameKey(ident)), 1)
		}
	}
	chunks := strings.Fields(query)
	for i := range chunks {
		for j := i + 1; j <= len(chunks) && j-i <= maxNameSpan; j++ {
			if i == 0 && j == len(chunks) {
				continue // the whole query, handled above
			}
			span := strings.Join(chunks[i:j], " ")
			parts := 0
			eachWord(span, true, func(string) { parts++ })
			if parts < 2 {
				continue // one plain word is evidence for BM25, not a name
			}
			raise(n.lookup(nameKey(span)), 1)
		}
	}
	return tiers
}

// notIdentifierRune reports whether r cannot be part of a tool name as
// people write them: letters, digits, "_", "-" and ".".
func notIdentifierRune(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-' && r != '.'
}

// withinOneEdit reports whether a and b differ by at most one insertion,
// deletion, substitution or swap of neighbouring bytes. It compares
// bytes, so a non-ASCII letter counts as more than one edit: typos are
// only tolerated in ASCII words.
func withinOneEdit(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(b)-len(a) > 1 {
		return false
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	if i == len(a) {
		return true // equal, or b has one extra byte at the end
	}
	if len(a) == len(b) {
		if a[i+1:] == b[i+1:] {
			return true // substitution
		}
		return i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:] // swap
	}
	return a[i:] == b[i+1:] // insertion into a
}
