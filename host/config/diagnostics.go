package config

import (
	"fmt"
	"io"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
)

// WriteDiagnostics prints diags the way Terraform does: severity and
// summary, "on FILE line N", the source excerpt with the subject
// underlined, then the detail. width wraps the text (0 = no wrapping);
// color adds terminal colours.
//
// files is normally [Config.Files] from the same [Load]; a file a
// diagnostic names that is missing from it is read from disk, so a caller
// may pass nil and still get source excerpts.
func WriteDiagnostics(w io.Writer, diags hcl.Diagnostics, files map[string]*hcl.File, width uint, color bool) error {
	all := make(map[string]*hcl.File, len(files))
	for name, f := range files {
		all[name] = f
	}
	parser := hclparse.NewParser()
	for _, diag := range diags {
		if diag.Subject == nil || diag.Subject.Filename == "" {
			continue
		}
		name := diag.Subject.Filename
		if _, ok := all[name]; ok {
			continue
		}
		// Parse errors are irrelevant here: only the bytes are needed for
		// the excerpt, and ParseHCLFile keeps them even when it fails.
		if f, _ := parser.ParseHCLFile(name); f != nil {
			all[name] = f
		}
	}
	if err := hcl.NewDiagnosticTextWriter(w, all, width, color).WriteDiagnostics(diags); err != nil {
		return fmt.Errorf("write diagnostics: %w", err)
	}
	return nil
}

// suggest returns the candidate closest to got, or "" when none is close
// enough to be a plausible typo. Case differences cost nothing, so "Never"
// suggests "never".
func suggest(got string, candidates []string) string {
	lower := strings.ToLower(got)
	best, bestDist := "", -1
	for _, c := range candidates {
		dist := levenshtein(lower, strings.ToLower(c))
		if bestDist < 0 || dist < bestDist {
			best, bestDist = c, dist
		}
	}
	// A third of the word, at least 1 and at most 3 edits: enough for
	// "on_request" → "on-request", not enough for "yes" → "never".
	limit := max(1, min(3, len([]rune(lower))/3))
	if bestDist < 0 || bestDist > limit {
		return ""
	}
	return best
}

// levenshtein is the edit distance (insert, delete, substitute) between a
// and b, by rune.
func levenshtein(a, b string) int {
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
