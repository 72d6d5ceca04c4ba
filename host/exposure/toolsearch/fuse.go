package toolsearch

import (
	"cmp"
	"slices"
	"strings"
)

// rrfK is reciprocal-rank fusion's constant: a tool at rank r of a list
// adds 1/(rrfK + r). 60 is the value of the paper that introduced it
// (Cormack et al., 2009) and most systems since; it lets agreement
// between the lists outweigh one list's top rank.
const rrfK = 60

// Fuse merges a Search result with a second ranking of the same tools
// (semantic, by ID, best first) by reciprocal-rank fusion and returns at
// most limit hits. Tools the query names (Hit.Named) stay first, in
// their order: a second opinion must not demote an exact name. Tools
// Search added only to fill its list (score zero) count in neither list.
// The fused Score is the fusion score.
func Fuse(lexical []Hit, semantic []string, limit int) []Hit {
	var out []Hit
	seen := map[string]bool{}
	for _, h := range lexical {
		if h.Named && len(out) < limit {
			out = append(out, h)
			seen[h.ID] = true
		}
	}
	scores := map[string]float64{}
	for r, h := range lexical {
		if !seen[h.ID] && h.Score > 0 {
			scores[h.ID] += 1 / float64(rrfK+r+1)
		}
	}
	for r, id := range semantic {
		if !seen[id] {
			scores[id] += 1 / float64(rrfK+r+1)
		}
	}
	rest := make([]Hit, 0, len(scores))
	for id, s := range scores {
		rest = append(rest, Hit{ID: id, Score: s})
	}
	slices.SortFunc(rest, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	for _, h := range rest {
		if len(out) == limit {
			break
		}
		out = append(out, h)
	}
	return out
}
