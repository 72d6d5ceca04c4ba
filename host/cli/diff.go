package cli

import (
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/host/clients"
)

// unifiedDiff renders the change from old to new as a unified diff with
// three lines of context, for connect --dry-run; values that look like
// credentials are shown as "<redacted>". The common head and
// tail are cut first, so the quadratic part only sees the changed middle
// (a few lines for connect's edits, even in a large ~/.claude.json).
func unifiedDiff(name string, old, new []byte) string {
	a, b := splitLines(string(old)), splitLines(string(new))
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	if pre == len(a) && pre == len(b) {
		return ""
	}
	// ops over the whole files: ' ' keep, '-' remove, '+' add.
	type op struct {
		kind byte
		text string
	}
	var ops []op
	for _, l := range a[:pre] {
		ops = append(ops, op{' ', l})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	// Longest common subsequence of the middles.
	lcs := make([][]int, len(ma)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(mb)+1)
	}
	for i := len(ma) - 1; i >= 0; i-- {
		for j := len(mb) - 1; j >= 0; j-- {
			if ma[i] == mb[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(ma) || j < len(mb) {
		switch {
		case i < len(ma) && j < len(mb) && ma[i] == mb[j]:
			ops = append(ops, op{' ', ma[i]})
			i, j = i+1, j+1
		case j < len(mb) && (i == len(ma) || lcs[i][j+1] >= lcs[i+1][j]):
			ops = append(ops, op{'+', mb[j]})
			j++
		default:
			ops = append(ops, op{'-', ma[i]})
			i++
		}
	}
	for _, l := range a[len(a)-suf:] {
		ops = append(ops, op{' ', l})
	}

	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s (after toolgate connect)\n", name, name)
	const ctx = 3
	for k := 0; k < len(ops); {
		if ops[k].kind == ' ' {
			k++
			continue
		}
		// A hunk: from ctx lines before the change to ctx lines after the
		// last change that is at most 2*ctx lines from the previous one.
		start := max(k-ctx, 0)
		end := k
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		oldStart, newStart := 1, 1
		for _, o := range ops[:start] {
			if o.kind != '+' {
				oldStart++
			}
			if o.kind != '-' {
				newStart++
			}
		}
		var oldN, newN int
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				oldN++
			}
			if o.kind != '-' {
				newN++
			}
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", oldStart, oldN, newStart, newN)
		for _, o := range ops[start:end] {
			out.WriteByte(o.kind)
			out.WriteString(clients.RedactLine(o.text))
			out.WriteByte('\n')
		}
		k = end
	}
	return out.String()
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
