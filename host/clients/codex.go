package clients

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/pelletier/go-toml/v2/unstable"
)

// errorsAs is errors.As, named so read.go needs no second import of it.
var errorsAs = errors.As

// tomlTable is one [table] or [[array table]] header of a TOML file and
// the text it governs: from the start of its header line to the start of
// the next header, less the comment lines directly above that header
// (they describe the next table).
type tomlTable struct {
	key        []string
	start, end int
	// lead is where the comment lines directly above the header begin:
	// removing the table removes them too.
	lead int
}

// tomlLayout is where Codex's servers sit in config.toml.
type tomlLayout struct {
	tables []tomlTable
	// inline names servers written as dotted keys or inline tables
	// (mcp_servers.x.command = …, or [mcp_servers] x = { … }), which
	// connect cannot cut out line by line.
	inline map[string]bool
}

func parseTOMLLayout(src []byte) (tomlLayout, error) {
	l := tomlLayout{inline: map[string]bool{}}
	p := unstable.Parser{}
	p.Reset(src)
	var current []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			var key []string
			start := -1
			for it := e.Key(); it.Next(); {
				n := it.Node()
				if start < 0 {
					start = int(n.Raw.Offset)
				}
				key = append(key, string(n.Data))
			}
			current = key
			ls := bytes.LastIndexByte(src[:max(start, 0)], '\n') + 1
			l.tables = append(l.tables, tomlTable{key: key, start: ls})
		case unstable.KeyValue:
			var key []string
			for it := e.Key(); it.Next(); {
				key = append(key, string(it.Node().Data))
			}
			full := append(append([]string{}, current...), key...)
			if len(current) < 2 && len(full) >= 2 && full[0] == "mcp_servers" {
				l.inline[full[1]] = true
			}
		}
	}
	if err := p.Error(); err != nil {
		return l, err
	}
	for i := range l.tables {
		floor := 0
		if i > 0 {
			floor = l.tables[i-1].start + 1
		}
		l.tables[i].lead = trimCommentLines(src, floor, l.tables[i].start)
		end := len(src)
		if i+1 < len(l.tables) {
			end = trimCommentLines(src, l.tables[i].start, l.tables[i+1].start)
		}
		l.tables[i].end = end
	}
	return l, nil
}

// trimCommentLines moves end back over the comment lines directly above
// it (not over blank lines), staying at or after start.
func trimCommentLines(src []byte, start, end int) int {
	for end > start {
		ls := bytes.LastIndexByte(src[:end-1], '\n') + 1
		if ls < start {
			break
		}
		line := bytes.TrimSpace(src[ls:end])
		if len(line) == 0 || line[0] != '#' {
			break
		}
		end = ls
	}
	return end
}

// codexOrder maps each server name to the position of its first
// appearance in the file.
func codexOrder(src []byte) map[string]int {
	order := map[string]int{}
	l, err := parseTOMLLayout(src)
	if err != nil {
		return order
	}
	for _, t := range l.tables {
		if len(t.key) >= 2 && t.key[0] == "mcp_servers" {
			if _, ok := order[t.key[1]]; !ok {
				order[t.key[1]] = t.start
			}
		}
	}
	return order
}

// serverSpans returns the byte ranges of the tables defining server name,
// or an error when the server is written in a form that cannot be cut
// out whole.
func (l tomlLayout) serverSpans(name string) ([][2]int, error) {
	if l.inline[name] {
		return nil, fmt.Errorf("mcp_servers.%s is written as dotted keys or an inline table; "+
			"rewrite it as a [mcp_servers.%s] table (or remove it by hand), then run connect again", name, name)
	}
	var out [][2]int
	for _, t := range l.tables {
		if len(t.key) >= 2 && t.key[0] == "mcp_servers" && t.key[1] == name {
			out = append(out, [2]int{t.lead, t.end})
		}
	}
	return out, nil
}
