package spelling

import "strings"

// Distance is the edit distance (insert, delete, substitute) between a and
// b, counted in runes.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Closest returns the candidate nearest to got, or "" when none is near
// enough to be a plausible typo. Case differences cost nothing ("Never"
// suggests "never"). Near enough is a third of the word, at least 1 and at
// most 3 edits: enough for "on_request" → "on-request", not for "yes" →
// "never".
func Closest(got string, candidates []string) string {
	lower := strings.ToLower(got)
	best, bestDist := "", -1
	for _, c := range candidates {
		d := Distance(lower, strings.ToLower(c))
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	limit := max(1, min(3, len([]rune(lower))/3))
	if bestDist < 0 || bestDist > limit {
		return ""
	}
	return best
}
