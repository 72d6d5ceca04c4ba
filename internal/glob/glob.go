package glob

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Pattern is a compiled glob. The zero Pattern matches nothing.
type Pattern struct {
	src string
	re  *regexp.Regexp
}

// Error says why a pattern does not compile and where.
type Error struct {
	Pattern string
	// Offset is the byte offset in Pattern where the problem starts.
	Offset int
	Reason string
}

// Error returns the reason alone: callers that report it (config
// diagnostics) name the attribute and the pattern themselves.
func (e *Error) Error() string { return e.Reason }

// ErrEmpty is the Reason of an empty pattern, wrapped in an [*Error].
var ErrEmpty = errors.New("an empty pattern matches nothing; use * for every name")

// Syntax is the one-line summary of the syntax for error texts that tell
// the user how to fix a pattern.
const Syntax = `* matches any run of characters except "/", ** also crosses "/", ? one character, [a-z] or [!a-z] a class, \* a literal *`

// Compile parses a glob (see the package documentation). Errors are
// [*Error] values.
func Compile(pattern string) (Pattern, error) {
	if pattern == "" {
		return Pattern{}, &Error{Pattern: pattern, Reason: ErrEmpty.Error()}
	}
	fail := func(at int, format string, args ...any) (Pattern, error) {
		return Pattern{}, &Error{Pattern: pattern, Offset: at, Reason: fmt.Sprintf(format, args...)}
	}
	var b strings.Builder
	b.WriteString(`^`)
	for i := 0; i < len(pattern); {
		switch c := pattern[i]; c {
		case '*':
			n := 1
			for i+n < len(pattern) && pattern[i+n] == '*' {
				n++
			}
			switch n {
			case 1:
				b.WriteString(`[^/]*`)
			case 2:
				b.WriteString(`.*`)
			default:
				return fail(i, "%d stars in a row; use * within a segment or ** across \"/\"", n)
			}
			i += n
		case '?':
			b.WriteString(`[^/]`)
			i++
		case '\\':
			if i+1 == len(pattern) {
				return fail(i, `the pattern ends with a lone "\"; write \\ for a backslash`)
			}
			r, size := utf8.DecodeRuneInString(pattern[i+1:])
			b.WriteString(regexp.QuoteMeta(string(r)))
			i += 1 + size
		case '[':
			class, next, err := parseClass(pattern, i)
			if err != nil {
				return fail(i, "%v", err)
			}
			b.WriteString(class)
			i = next
		default:
			r, size := utf8.DecodeRuneInString(pattern[i:])
			b.WriteString(regexp.QuoteMeta(string(r)))
			i += size
		}
	}
	b.WriteString(`$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		// parseClass checks classes; anything left is a bad range such as [z-a].
		return fail(0, "invalid character class (%v)", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	return Pattern{src: pattern, re: re}, nil
}

// parseClass turns the class starting at pattern[start] == '[' into a
// regular expression class and returns the index after its "]".
func parseClass(pattern string, start int) (string, int, error) {
	i := start + 1
	negated := i < len(pattern) && (pattern[i] == '!' || pattern[i] == '^')
	if negated {
		i++
	}
	var body strings.Builder
	for ; i < len(pattern) && pattern[i] != ']'; i++ {
		switch c := pattern[i]; c {
		case '\\':
			if i+1 == len(pattern) {
				return "", 0, errors.New(`"[" has no closing "]"`)
			}
			i++
			body.WriteByte('\\')
			body.WriteByte(pattern[i])
		case '[':
			body.WriteString(`\[`)
		default:
			body.WriteByte(c)
		}
	}
	if i == len(pattern) {
		return "", 0, errors.New(`"[" has no closing "]"`)
	}
	if body.Len() == 0 {
		return "", 0, errors.New(`"[]" is an empty character class`)
	}
	if negated {
		return `[^/` + body.String() + `]`, i + 1, nil
	}
	class := `[` + body.String() + `]`
	re, err := regexp.Compile(`^` + class + `$`)
	if err != nil {
		return "", 0, fmt.Errorf("invalid character class %s", pattern[start:i+1])
	}
	if re.MatchString("/") {
		return "", 0, fmt.Errorf(`the class %s matches "/", which separates segments; use ** to cross "/"`, pattern[start:i+1])
	}
	return class, i + 1, nil
}

// MustCompile is [Compile] for patterns known to be valid (constants,
// tests); it panics on a bad one.
func MustCompile(pattern string) Pattern {
	p, err := Compile(pattern)
	if err != nil {
		panic(err)
	}
	return p
}

// Match reports whether the whole name matches.
func (p Pattern) Match(name string) bool {
	return p.re != nil && p.re.MatchString(name)
}

// String returns the pattern as written.
func (p Pattern) String() string { return p.src }

// List is a set of patterns; a name matches the list when it matches any
// of them. A nil or empty List matches nothing.
type List []Pattern

// CompileList compiles every pattern, failing on the first bad one.
func CompileList(patterns []string) (List, error) {
	if patterns == nil {
		return nil, nil
	}
	out := make(List, 0, len(patterns))
	for _, s := range patterns {
		p, err := Compile(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not a valid glob: %w", s, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// Match reports whether name matches any pattern of the list.
func (l List) Match(name string) bool {
	for _, p := range l {
		if p.Match(name) {
			return true
		}
	}
	return false
}
