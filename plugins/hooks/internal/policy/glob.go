package policy

import (
	"errors"
	"regexp"
	"strings"
)

// compileGlob turns a shell-style glob into an anchored regular expression:
// "*" matches any run of characters (including none), "?" one character,
// "[abc]", "[a-z]" and "[!abc]" a character class, and "\x" the character x.
// Unlike path.Match, "*" also matches "/", because tool names are not paths.
func compileGlob(glob string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`^`)
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '\\':
			if i+1 == len(glob) {
				return nil, errors.New(`the glob ends with a lone "\"`)
			}
			i++
			b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		case '[':
			end := strings.IndexByte(glob[i+1:], ']')
			if end < 0 {
				return nil, errors.New(`"[" has no closing "]"`)
			}
			class := glob[i+1 : i+1+end]
			i += end + 1
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			if class == "" || class == "^" {
				return nil, errors.New(`"[]" is an empty character class`)
			}
			b.WriteString(`[` + strings.ReplaceAll(class, `[`, `\[`) + `]`)
		default:
			b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		}
	}
	b.WriteString(`$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, errors.New("invalid character class")
	}
	return re, nil
}
