package execution

import (
	"strconv"
	"unicode/utf8"
)

// Marker pieces: the marker reads "…N chars truncated…" where N counts
// the bytes removed (Codex's wording, so models see familiar text).
const (
	markerPrefix = "…"
	markerSuffix = " chars truncated…"
)

// Truncate returns s when it fits in budget bytes. Otherwise it keeps the
// start and the end of s around the marker "…N chars truncated…", N being
// the number of bytes removed, so that the whole result is at most budget
// bytes and no UTF-8 character is split. The kept bytes are shared evenly
// between start and end (the end gets the odd byte).
//
// A budget too small for the marker itself (23 bytes and up, by the
// digits of N) yields the longest start of s that fits, without a marker;
// a budget of 0 or less yields "".
func Truncate(s string, budget int) string {
	if len(s) <= budget {
		return s
	}
	return truncateAround(s, 0, budget)
}

// truncateAround is Truncate of the string s would be with hidden more
// bytes inserted somewhere in its middle: it never shows them, only
// counts them as removed. The hidden bytes must lie more than budget/2 +
// 4 bytes from both ends, and budget must leave room for the marker.
func truncateAround(s string, hidden, budget int) string {
	if len(s)+hidden <= budget {
		return s
	}
	if budget <= 0 {
		return ""
	}
	fixed := len(markerPrefix) + len(markerSuffix)
	// The marker's width depends on N, and N on how much room the marker
	// leaves: try each digit count until N has exactly that many digits.
	// N never shrinks as the marker grows, so the first match is the
	// longest result.
	for digits := 1; digits <= 20; digits++ {
		keep := budget - fixed - digits
		if keep < 0 {
			break
		}
		headEnd := runeStartAtOrBefore(s, keep/2)
		tailStart := runeStartAtOrAfter(s, len(s)-(keep-keep/2))
		removed := tailStart + hidden - headEnd
		if decimalDigits(removed) == digits {
			return s[:headEnd] + markerPrefix + strconv.Itoa(removed) + markerSuffix + s[tailStart:]
		}
	}
	return s[:runeStartAtOrBefore(s, budget)]
}

// runeStartAtOrBefore returns the largest i <= n that starts a character
// (or len(s)).
func runeStartAtOrBefore(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// runeStartAtOrAfter returns the smallest i >= n that starts a character
// (or len(s)).
func runeStartAtOrAfter(s string, n int) int {
	n = max(n, 0)
	for n < len(s) && !utf8.RuneStart(s[n]) {
		n++
	}
	return n
}

func decimalDigits(n int) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}
