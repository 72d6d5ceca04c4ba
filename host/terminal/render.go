package terminal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits of what a prompt shows. A prompt must fit on a screen; the full
// arguments are in the audit log.
const (
	maxLineRunes      = 160  // one argument line; longer lines are cut in the middle
	maxArgumentLines  = 40   // lines of pretty-printed arguments
	maxArgumentBytes  = 4000 // bytes of pretty-printed arguments
	maxDescribeRunes  = 200  // the one-line description
	truncationContext = 40   // runes kept after the cut of a long line
)

type style struct{ color bool }

func (s style) wrap(code, text string) string {
	if !s.color || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

func (s style) bold(t string) string   { return s.wrap("1", t) }
func (s style) dim(t string) string    { return s.wrap("2", t) }
func (s style) red(t string) string    { return s.wrap("31", t) }
func (s style) yellow(t string) string { return s.wrap("33", t) }

// clean makes server-controlled text safe to print: control characters
// (an escape sequence could redraw the prompt) and bidirectional
// overrides (which can make "rm" read as "mr") are shown as escapes.
// Newlines are cleaned too; split text into lines first where they
// matter.
func clean(s string) string {
	if !strings.ContainsFunc(s, unsafeRune) && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			b.WriteString(fmt.Sprintf(`\x%02x`, s[i]))
		case r == '\t':
			b.WriteString("    ")
		case unsafeRune(r) && r < 0x100:
			b.WriteString(fmt.Sprintf(`\x%02x`, r))
		case unsafeRune(r):
			b.WriteString(fmt.Sprintf(`\u%04x`, r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

// lines splits server text into cleaned lines.
func lines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	parts := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, p := range parts {
		parts[i] = clean(p)
	}
	return parts
}

// firstLine is the first non-empty line of s, cleaned and capped.
func firstLine(s string) string {
	for _, l := range lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			return truncateMiddle(l, maxDescribeRunes)
		}
	}
	return ""
}

// truncateMiddle keeps the start and the end of s, which is where a path
// or a command usually says what it does, and marks what was cut.
func truncateMiddle(s string, limit int) string {
	n := utf8.RuneCountInString(s)
	if n <= limit {
		return s
	}
	r := []rune(s)
	tail := min(truncationContext, limit/4)
	head := limit - tail
	cut := n - head - tail
	return string(r[:head]) + fmt.Sprintf("…%d chars truncated…", cut) + string(r[n-tail:])
}

// describeAnnotations puts the tool's hints in words. Absent hints are
// shown as what the MCP spec says they default to, so the user sees what
// the approval rule assumed.
func describeAnnotations(a *mcp.ToolAnnotations, st style) string {
	if a == nil {
		return st.yellow("none declared") + " (assumed: may modify, destructive, open-world)"
	}
	var parts []string
	if a.ReadOnlyHint {
		parts = append(parts, "read-only")
	} else {
		parts = append(parts, "may modify its environment")
	}
	switch {
	case a.DestructiveHint == nil:
		parts = append(parts, st.red("destructive")+" (not declared; the default)")
	case *a.DestructiveHint:
		parts = append(parts, st.red("destructive"))
	default:
		parts = append(parts, "non-destructive")
	}
	switch {
	case a.OpenWorldHint == nil:
		parts = append(parts, "open-world (not declared; the default)")
	case *a.OpenWorldHint:
		parts = append(parts, "open-world")
	default:
		parts = append(parts, "closed-world")
	}
	if a.IdempotentHint {
		parts = append(parts, "idempotent")
	} else {
		parts = append(parts, "not idempotent")
	}
	return strings.Join(parts, ", ")
}

// formatArguments pretty-prints the call's JSON arguments in their
// original key order. Long lines (long strings) are cut in the middle and
// the block is capped; invalid JSON is shown as cleaned text.
func formatArguments(raw json.RawMessage) []string {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" || string(trimmed) == "{}" {
		return []string{"(none)"}
	}
	var buf bytes.Buffer
	text := string(trimmed)
	if json.Indent(&buf, trimmed, "", "  ") == nil {
		text = buf.String()
	}
	var out []string
	size := 0
	all := lines(text)
	for i, l := range all {
		l = truncateMiddle(l, maxLineRunes)
		if i >= maxArgumentLines || size+len(l) > maxArgumentBytes {
			out = append(out, fmt.Sprintf("… (%d more lines not shown)", len(all)-i))
			break
		}
		out = append(out, l)
		size += len(l) + 1
	}
	return out
}
