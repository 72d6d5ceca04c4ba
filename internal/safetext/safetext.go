package safetext

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Line returns s for one line of output: every control character
// (newlines and tabs too), every bidirectional control and every byte
// that is not UTF-8 is replaced by a visible escape (\n, \t, \x1b,
// \u202e, \xff). Text without any of them is returned as is.
func Line(s string) string { return escape(s, false) }

// Block is Line for multi-line text (a tool's result, a stderr tail):
// newlines, tabs and the CR of a CRLF stay; everything else Line escapes
// is escaped.
func Block(s string) string { return escape(s, true) }

func escape(s string, keepLayout bool) string {
	i := firstUnsafe(s, keepLayout)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !unsafeRune(r, keepLayout), keepLayout && isCRLF(s, i):
			b.WriteString(s[i : i+size])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.String()
}

// firstUnsafe is the index of the first byte Line or Block would change,
// or -1.
func firstUnsafe(s string, keepLayout bool) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return i
			}
		}
		if unsafeRune(r, keepLayout) && !(keepLayout && isCRLF(s, i)) {
			return i
		}
	}
	return -1
}

// isCRLF reports whether s[i:] starts with "\r\n".
func isCRLF(s string, i int) bool { return strings.HasPrefix(s[i:], "\r\n") }

// unsafeRune reports whether r acts on a terminal or reorders text
// rather than showing as itself.
func unsafeRune(r rune, keepLayout bool) bool {
	if keepLayout && (r == '\n' || r == '\t') {
		return false
	}
	return unicode.IsControl(r) || Invisible(r)
}

// Invisible reports the characters that change how text reads without
// showing themselves, and that encoding/json leaves raw: the
// bidirectional controls, the line and paragraph separators, and the
// other format characters (Unicode category Cf: zero-width space, word
// joiner, BOM, soft hyphen, the tag characters that can smuggle hidden
// ASCII). Zero-width joiner and non-joiner are kept: scripts such as
// Persian and Devanagari and emoji sequences need them to render right.
// It is the one definition every output format uses (Line, Block, JSON).
func Invisible(r rune) bool {
	switch {
	case r < 0x80:
		return false
	case r == '\u200c', r == '\u200d':
		return false
	case r == '\u2028', r == '\u2029', isBidiControl(r):
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// isBidiControl reports the Unicode bidirectional formatting characters:
// marks, embeddings, overrides and isolates (Unicode's Bidi_Control).
func isBidiControl(r rune) bool {
	switch {
	case r == '\u061c', r == '\u200e', r == '\u200f':
		return true
	case r >= '\u202a' && r <= '\u202e':
		return true
	case r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
}

// JSON rewrites, inside encoded JSON, the invisible characters (see
// Invisible) that encoding/json leaves raw into \u escapes. The value
// the JSON encodes is unchanged; a reader that views the output (an
// audit log opened in a terminal or editor, `toolgate tools --json`)
// sees the escape instead of text that reads backwards or hides words.
// Control characters are escaped by encoding/json already. Characters
// past U+FFFF are written as the UTF-16 surrogate pair JSON requires.
func JSON(b []byte) []byte {
	if bytes.IndexFunc(b, Invisible) < 0 {
		return b
	}
	var out bytes.Buffer
	out.Grow(len(b) + 16)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		switch {
		case !Invisible(r):
			out.Write(b[:size])
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&out, `\u%04x\u%04x`, hi, lo)
		default:
			fmt.Fprintf(&out, `\u%04x`, r)
		}
		b = b[size:]
	}
	return out.Bytes()
}
