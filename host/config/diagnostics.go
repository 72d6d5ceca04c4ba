package config

import (
	"github.com/toolgate/toolgate/internal/spelling"

	"fmt"
	"io"

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
// enough to be a plausible typo (see spelling.Closest).
func suggest(got string, candidates []string) string { return spelling.Closest(got, candidates) }

// levenshtein is the edit distance between a and b.
func levenshtein(a, b string) int { return spelling.Distance(a, b) }
