package execution_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolgate/toolgate/host/execution"
)

var markerRE = regexp.MustCompile(`…(\d+) chars truncated…`)

// checkTruncation asserts the invariants every truncation keeps: within
// budget, valid UTF-8 when the input was, a start and an end of s around
// a marker that counts exactly the bytes removed.
func checkTruncation(t *testing.T, s string, budget int, got string) {
	t.Helper()
	if len(got) > budget {
		t.Fatalf("Truncate(len %d, %d) = %d bytes, over budget", len(s), budget, len(got))
	}
	if utf8.ValidString(s) && !utf8.ValidString(got) {
		t.Fatalf("Truncate(%q, %d) = %q split a character", s, budget, got)
	}
	loc := markerRE.FindStringSubmatchIndex(got)
	if loc == nil {
		t.Fatalf("Truncate(len %d, %d) = %q has no marker", len(s), budget, got)
	}
	head, tail := got[:loc[0]], got[loc[1]:]
	n, _ := strconv.Atoi(got[loc[2]:loc[3]])
	if !strings.HasPrefix(s, head) || !strings.HasSuffix(s, tail) {
		t.Fatalf("Truncate kept %q … %q, not the start and end of the input", head, tail)
	}
	if removed := len(s) - len(head) - len(tail); n != removed {
		t.Fatalf("marker says %d chars truncated, %d bytes were removed", n, removed)
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		name   string
		s      string
		budget int
		want   string
	}{
		{name: "fits with room", s: "hello", budget: 100, want: "hello"},
		{name: "budget equal to length", s: strings.Repeat("a", 40), budget: 40, want: strings.Repeat("a", 40)},
		// 40 bytes into 39: a two-digit marker (24 bytes) leaves 15
		// bytes, 7 at the start and 8 at the end, so 25 bytes go.
		{name: "one byte less", s: strings.Repeat("a", 20) + strings.Repeat("b", 20), budget: 39, want: "aaaaaaa…25 chars truncated…bbbbbbbb"},
		{name: "empty input", s: "", budget: 0, want: ""},
		{name: "zero budget", s: "abc", budget: 0, want: ""},
		{name: "negative budget", s: "abc", budget: -5, want: ""},
		{name: "tiny budget keeps a start", s: strings.Repeat("x", 100), budget: 5, want: "xxxxx"},
		{name: "tiny budget on a multibyte boundary", s: strings.Repeat("é", 50), budget: 5, want: "éé"},
		{name: "marker alone fits", s: strings.Repeat("z", 30), budget: 24, want: "…30 chars truncated…"},
		{name: "marker does not fit", s: strings.Repeat("z", 30), budget: 23, want: strings.Repeat("z", 23)},
		{
			// 2-byte characters: 17 bytes of room would split one on each
			// side, so 8 bytes are kept at the start and 8 at the end.
			name: "multibyte boundaries", s: strings.Repeat("é", 40), budget: 40,
			want: "éééé…64 chars truncated…éééé",
		},
		{
			// 4-byte characters, odd room: nothing partial survives.
			name: "four-byte characters", s: strings.Repeat("😀", 20), budget: 33,
			want: "😀…72 chars truncated…😀",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := execution.Truncate(tt.s, tt.budget)
			if got != tt.want {
				t.Fatalf("Truncate(%q, %d)\n got %q\nwant %q", tt.s, tt.budget, got, tt.want)
			}
			if strings.Contains(got, "truncated") {
				checkTruncation(t, tt.s, tt.budget, got)
			}
		})
	}
}

// The marker's width depends on the count it prints; around digit
// boundaries the result must still fit exactly.
func TestTruncateAroundMarkerWidths(t *testing.T) {
	for _, n := range []int{31, 32, 33, 40, 109, 110, 111, 1000, 1030, 10_000, 100_050} {
		for _, budget := range []int{23, 24, 25, 30, 32, 33, 100, 1000} {
			if budget >= n {
				continue
			}
			for _, s := range []string{strings.Repeat("a", n), strings.Repeat("ж", n/2), strings.Repeat("語", n/3)} {
				if len(s) <= budget {
					continue
				}
				got := execution.Truncate(s, budget)
				if strings.Contains(got, "truncated") {
					checkTruncation(t, s, budget, got)
				} else if len(got) > budget || !strings.HasPrefix(s, got) {
					t.Fatalf("Truncate(len %d, %d) = %q", len(s), budget, got)
				}
			}
		}
	}
}
