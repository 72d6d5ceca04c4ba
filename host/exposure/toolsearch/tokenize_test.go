package toolsearch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestTokenize(t *testing.T) {
	split := Options{SplitIdentifiers: true}
	splitStem := Options{SplitIdentifiers: true, Stemming: true}
	tests := []struct {
		name string
		in   string
		opts Options
		want []string
	}{
		{"snake case", "write_file", split, []string{"write", "file"}},
		{"kebab case", "get-tiny-image", split, []string{"get", "tiny", "image"}},
		{"camel case", "gzipFileAsResource", split, []string{"gzip", "file", "resource"}},
		{"pascal case", "GetEnv", split, []string{"get", "env"}},
		{"acronym before word", "HTTPServerURL", split, []string{"http", "server", "url"}},
		{"dotted", "calendar.respondToEvent", split, []string{"calendar", "respond", "event"}},
		{"digits", "gen_00042 utf8", split, []string{"gen", "00042", "utf", "8"}},
		{"flat model name", "mcp__files__write_file", split, []string{"mcp", "files", "write", "file"}},
		{"without splitting underscores join", "mcp__files__write_file writeFile", Options{}, []string{"mcp__files__write_file", "writefile"}},
		{"without splitting hyphens still separate", "get-env", Options{}, []string{"get", "env"}},
		{"stop words dropped", "What is the sum of a and b?", split, []string{"sum", "b"}},
		{"contractions", "don't show the server's pid", split, []string{"show", "server", "pid"}},
		{"stemming", "Compresses compressed compression files", splitStem, []string{"compress", "compress", "compress", "file"}},
		{"stemming after splitting", "listRunningOperations", splitStem, []string{"list", "run", "oper"}},
		{"unicode letters", "Größe ändern", split, []string{"größe", "ändern"}},
		{"only punctuation", " -- __ .. ", split, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Tokenize(tt.in, tt.opts)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Tokenize(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestNameKeyIgnoresSeparatorsAndCase(t *testing.T) {
	for _, in := range []string{"write_file", "write-file", "writeFile", "Write File", "write.file", "WRITE__FILE"} {
		if got := nameKey(in); got != "writefile" {
			t.Errorf("nameKey(%q) = %q, want writefile", in, got)
		}
	}
}

func TestStem(t *testing.T) {
	// Outputs of the published Porter algorithm.
	tests := map[string]string{
		"caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "cats": "cat",
		"feed": "feed", "agreed": "agre", "plastered": "plaster", "bled": "bled", "motoring": "motor",
		"sing": "sing", "conflated": "conflat", "troubled": "troubl", "sized": "size", "hopping": "hop",
		"tanned": "tan", "falling": "fall", "hissing": "hiss", "fizzed": "fizz", "failing": "fail",
		"filing": "file", "happy": "happi", "sky": "sky", "relational": "relat", "conditional": "condit",
		"rational": "ration", "generalization": "gener", "oscillators": "oscil", "environment": "environ",
		"variables": "variabl", "running": "run", "compression": "compress", "elicitation": "elicit",
		"adjustment": "adjust", "dependent": "depend", "adoption": "adopt", "effective": "effect",
		"hopeful": "hope", "goodness": "good", "controlling": "control", "roll": "roll",
		"is": "is", "a": "a", "日本": "日本", "00042": "00042",
	}
	for in, want := range tests {
		if got := stem(in); got != want {
			t.Errorf("stem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWithinOneEdit(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"image", "image", true},
		{"imge", "image", true},   // deletion
		{"imagee", "image", true}, // insertion
		{"imoge", "image", true},  // substitution
		{"imgae", "image", true},  // swap
		{"image", "imag", true},   // at the end
		{"xmage", "image", true},  // at the start
		{"imgea", "image", false}, // two edits
		{"images", "imag", false}, // two deletions
		{"enviroment", "environment", true},
		{"summarise", "summarize", true},
		{"", "a", true},
		{"", "ab", false},
	}
	for _, tt := range tests {
		if got := withinOneEdit(tt.a, tt.b); got != tt.want {
			t.Errorf("withinOneEdit(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := withinOneEdit(tt.b, tt.a); got != tt.want {
			t.Errorf("withinOneEdit(%q, %q) = %v, want %v", tt.b, tt.a, got, tt.want)
		}
	}
}
