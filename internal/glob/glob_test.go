package glob

import (
	"errors"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	for _, tt := range []struct {
		pattern, name string
		want          bool
	}{
		{"read_file", "read_file", true},
		{"read_file", "read_files", false},
		{"read_file", "Read_file", false},
		{"*", "anything_at.all-1", true},
		{"*", "", true},
		{"*", "github/create_issue", false},
		{"**", "github/create_issue", true},
		{"**", "", true},
		{"github/*", "github/create_issue", true},
		{"github/*", "github/issues/create", false},
		{"github/**", "github/issues/create", true},
		{"**/create", "github/issues/create", true},
		{"**/create", "create", false},
		{"*_file", "read_file", true},
		{"*_file", "read_file_now", false},
		{"read_*", "read_", true},
		{"mcp__files__*", "mcp__files__read", true},
		{"mcp__files__*", "mcp__files2__read", false},
		{"mcp__files*", "mcp__files2__read", true},
		{"?", "a", true},
		{"?", "é", true},
		{"?", "ab", false},
		{"?", "/", false},
		{"a?c", "abc", true},
		{"[ab]*", "b_tool", true},
		{"[ab]*", "c_tool", false},
		{"[a-c]x", "bx", true},
		{"[!a-c]x", "dx", true},
		{"[!a-c]x", "bx", false},
		{"[!a-c]x", "/x", false},
		{"[^a-c]x", "dx", true},
		{`\*`, "*", true},
		{`\*`, "a", false},
		{`a\?`, "a?", true},
		{`\[x]`, "[x]", true},
		{`a\\b`, `a\b`, true},
		{"a.b", "a.b", true},
		{"a.b", "axb", false},
		{"a+b", "a+b", true},
		{"(x)|y", "(x)|y", true},
		{"(x)|y", "y", false},
		{"tool-é*", "tool-éa", true},
	} {
		p, err := Compile(tt.pattern)
		if err != nil {
			t.Errorf("Compile(%q): %v", tt.pattern, err)
			continue
		}
		if got := p.Match(tt.name); got != tt.want {
			t.Errorf("%q.Match(%q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestCompileRejects(t *testing.T) {
	for _, tt := range []struct {
		pattern string
		offset  int
		reason  string
	}{
		{"", 0, "empty pattern"},
		{"a[bc", 1, `"[" has no closing "]"`},
		{"[]", 0, "empty character class"},
		{"[!]", 0, "empty character class"},
		{`ab\`, 2, `lone "\"`},
		{"a***", 1, "3 stars in a row"},
		{"[+-0]", 0, `matches "/"`},
		{"[/]", 0, `matches "/"`},
		{"[z-a]", 0, "invalid character class"},
	} {
		_, err := Compile(tt.pattern)
		var ge *Error
		if !errors.As(err, &ge) {
			t.Errorf("Compile(%q) = %v, want an *Error", tt.pattern, err)
			continue
		}
		if ge.Offset != tt.offset || !strings.Contains(ge.Reason, tt.reason) {
			t.Errorf("Compile(%q) = offset %d %q, want offset %d containing %q", tt.pattern, ge.Offset, ge.Reason, tt.offset, tt.reason)
		}
	}
}

func TestZeroPatternMatchesNothing(t *testing.T) {
	if (Pattern{}).Match("") || (Pattern{}).Match("x") {
		t.Error("the zero Pattern matched")
	}
}

func TestList(t *testing.T) {
	l, err := CompileList([]string{"read_*", "list"})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"read_file": true, "list": true, "lists": false, "write": false} {
		if got := l.Match(name); got != want {
			t.Errorf("Match(%q) = %v, want %v", name, got, want)
		}
	}
	if l, err := CompileList(nil); err != nil || l != nil || l.Match("x") {
		t.Errorf("CompileList(nil) = %v, %v; want a nil list that matches nothing", l, err)
	}
	if _, err := CompileList([]string{"ok", "bad["}); err == nil || !strings.Contains(err.Error(), `"bad["`) {
		t.Errorf("CompileList with a bad pattern = %v, want an error naming it", err)
	}
}
