package clients

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// EntryName is the name of the server entry that points a client at
// toolgate.
const EntryName = "toolgate"

// Target is how a client reaches toolgate: a command it runs (stdio), or
// toolgate's HTTP URL with the token read from an environment variable.
type Target struct {
	Command string   // absolute path of the toolgate binary
	Args    []string // serve --stdio --config <abs path>
	URL     string   // set for HTTP instead of Command
	// TokenEnvVar names the variable holding serve's bearer token (HTTP).
	TokenEnvVar string
	// StartupTimeoutSec is written where the client takes a per-server
	// startup limit (Codex), so its limit is above toolgate's first-list
	// wait. 0 = leave the client's default.
	StartupTimeoutSec int
}

// ConnectResult is what Connect changed.
type ConnectResult struct {
	Out []byte // the client's file after the edit
	// Moved are the servers removed from the client's file.
	Moved []string
	// Direct are the servers the client still reaches around toolgate.
	Direct []string
}

// ErrNotConnectable is a client/target combination the client's file
// cannot express.
var ErrNotConnectable = errors.New("cannot connect")

// Connect returns f's text with the toolgate entry set (added, or
// replaced when present) and, for each name in move, that server's entry
// removed. Everything else in the file is kept byte for byte.
func Connect(f *File, t Target, move []string) (*ConnectResult, error) {
	if (t.Command == "") == (t.URL == "") {
		return nil, fmt.Errorf("%w: set either the toolgate command (stdio) or its URL (HTTP)", ErrNotConnectable)
	}
	res := &ConnectResult{}
	known := map[string]bool{}
	for _, s := range f.Servers {
		known[s.Name] = true
	}
	var toRemove []string
	for _, m := range move {
		if m == EntryName || !known[m] {
			continue
		}
		toRemove = append(toRemove, m)
	}
	sort.Strings(toRemove)
	var err error
	if f.Client.Format == FormatCodex {
		res.Out, err = f.connectTOML(t, toRemove)
	} else {
		res.Out, err = f.connectJSON(t, toRemove)
	}
	if err != nil {
		return nil, err
	}
	res.Moved = toRemove
	for _, s := range f.Servers {
		if s.Name != EntryName && !contains(toRemove, s.Name) {
			res.Direct = append(res.Direct, s.Name)
		}
	}
	return res, nil
}

// entry is the toolgate server entry in the client's JSON dialect, as
// ordered members.
func (f *File) entry(t Target) ([]KV, error) {
	type member = KV
	var out []member
	q := func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	ref := func() string {
		switch f.Client.ID {
		case "cursor", "vscode":
			return "${env:" + t.TokenEnvVar + "}"
		}
		return "${" + t.TokenEnvVar + "}"
	}
	if t.URL != "" {
		switch f.Client.ID {
		case "claude-desktop":
			return nil, fmt.Errorf("%w: Claude Desktop's config file runs local commands only; connect it over stdio (without --url)", ErrNotConnectable)
		case "claude-code", "vscode":
			out = append(out, member{"type", q("http")})
		}
		urlKey := "url"
		if f.Client.ID == "gemini" {
			urlKey = "httpUrl" // Gemini's url means SSE
		}
		out = append(out, member{urlKey, jsonQuote(t.URL)})
		if t.TokenEnvVar != "" {
			out = append(out, member{"headers", "{" + jsonQuote("Authorization") + ": " + jsonQuote("Bearer "+ref()) + "}"})
		}
		return out, nil
	}
	switch f.Client.ID {
	case "claude-code", "vscode":
		out = append(out, member{"type", q("stdio")})
	}
	args := make([]string, len(t.Args))
	for i, a := range t.Args {
		args[i] = jsonQuote(a)
	}
	out = append(out, member{"command", jsonQuote(t.Command)}, member{"args", "[" + strings.Join(args, ", ") + "]"})
	return out, nil
}

func (f *File) connectJSON(t Target, remove []string) ([]byte, error) {
	members, err := f.entry(t)
	if err != nil {
		return nil, err
	}
	src := f.src
	ed := &jsonEditor{src: src, nl: "\n", unit: "  "}
	if bytes.Contains(src, []byte("\r\n")) {
		ed.nl = "\r\n"
	}
	if len(f.root.members) > 0 {
		if ind := lineIndent(src, f.root.members[0].keyStart); ind != "" {
			ed.unit = ind
		}
	}
	if len(bytes.TrimSpace(src)) == 0 {
		// No file yet (or an empty one): write a whole document.
		var b strings.Builder
		b.WriteString("{" + ed.nl + ed.unit + jsonQuote(f.Client.serversKey()) + ": {" + ed.nl)
		b.WriteString(ed.unit + ed.unit + jsonQuote(EntryName) + ": " + ed.object(members, ed.unit+ed.unit) + ed.nl)
		b.WriteString(ed.unit + "}" + ed.nl + "}" + ed.nl)
		return []byte(b.String()), nil
	}
	servers := f.root.member(f.Client.serversKey())
	if servers == nil {
		ind := lineIndent(src, f.root.start)
		text := "{" + ed.nl + ind + ed.unit + ed.unit + jsonQuote(EntryName) + ": " + ed.object(members, ind+ed.unit+ed.unit) + ed.nl + ind + ed.unit + "}"
		ed.insertMember(f.root, f.Client.serversKey(), text)
		return ed.apply()
	}
	if servers.kind != jsonObject {
		return nil, fmt.Errorf("%s: %q is not an object; fix it, then connect again", f.Path, f.Client.serversKey())
	}
	// Which members go, per object.
	removed := map[*jsonValue]map[int]bool{}
	for _, s := range f.Servers {
		if s.Name != EntryName && contains(remove, s.Name) {
			if removed[s.obj] == nil {
				removed[s.obj] = map[int]bool{}
			}
			removed[s.obj][s.index] = true
		}
	}
	placed := false
	for _, m := range servers.members {
		if m.key == EntryName {
			ed.splice(m.value.start, m.value.end, ed.object(members, lineIndent(src, m.keyStart)))
			placed = true
		}
	}
	for _, obj := range f.serverObjects() {
		for i, m := range obj.membersOrNil() {
			if !removed[obj][i] {
				continue
			}
			if !placed && obj == servers {
				// The entry takes the place of the first server it
				// replaces, commas and all.
				ed.splice(m.keyStart, m.value.end, jsonQuote(EntryName)+": "+ed.object(members, lineIndent(src, m.keyStart)))
				placed = true
				delete(removed[obj], i) // its place stays filled
				continue
			}
			ed.removeMember(obj, i, removed[obj])
		}
	}
	if !placed {
		ind := lineIndent(src, servers.start) + ed.unit
		if len(servers.members) > 0 {
			ind = lineIndent(src, servers.members[len(servers.members)-1].keyStart)
		}
		ed.insertMember(servers, EntryName, ed.object(members, ind))
	}
	out, err := ed.apply()
	if err != nil {
		return nil, err
	}
	// Check the result reads back as the client will read it.
	if _, err := parseJSONC(f.Path, out); err != nil {
		return nil, fmt.Errorf("editing %s would not give valid JSON (%v); add the toolgate entry by hand", f.Path, err)
	}
	return out, nil
}

// jsonEditor collects splices into a JSON text and applies them at once.
type jsonEditor struct {
	src     []byte
	nl      string
	unit    string
	splices []splice
}

type splice struct {
	start, end int
	text       string
}

func (e *jsonEditor) splice(start, end int, text string) {
	e.splices = append(e.splices, splice{start, end, text})
}

func (e *jsonEditor) apply() ([]byte, error) {
	sort.Slice(e.splices, func(i, j int) bool { return e.splices[i].start < e.splices[j].start })
	var out bytes.Buffer
	pos := 0
	for _, s := range e.splices {
		if s.start < pos {
			return nil, errors.New("overlapping edits (a toolgate bug; please report it)")
		}
		out.Write(e.src[pos:s.start])
		out.WriteString(s.text)
		pos = s.end
	}
	out.Write(e.src[pos:])
	return out.Bytes(), nil
}

// object writes members as a JSON object whose closing brace is at
// indentation ind.
func (e *jsonEditor) object(members []KV, ind string) string {
	var b strings.Builder
	b.WriteString("{")
	for i, m := range members {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(e.nl + ind + e.unit + jsonQuote(m.K) + ": " + m.V)
	}
	b.WriteString(e.nl + ind + "}")
	return b.String()
}

// skipSpace returns the offset of the first byte at or after i that is
// neither whitespace nor inside a comment.
func skipSpace(src []byte, i int) int {
	p := &jsoncParser{src: src, pos: i}
	_ = p.skip()
	return p.pos
}

// insertMember adds "key": value as obj's last member.
func (e *jsonEditor) insertMember(obj *jsonValue, key, value string) {
	src := e.src
	if len(obj.members) == 0 {
		ind := lineIndent(src, obj.start)
		text := e.nl + ind + e.unit + jsonQuote(key) + ": " + value
		if len(bytes.TrimSpace(src[obj.start+1:obj.end-1])) == 0 {
			e.splice(obj.start, obj.end, "{"+text+e.nl+ind+"}")
			return
		}
		// Only comments inside: keep them after the new member.
		e.splice(obj.start+1, obj.start+1, text)
		return
	}
	last := obj.members[len(obj.members)-1]
	ind := lineIndent(src, last.keyStart)
	at := last.value.end
	comma := ","
	if j := skipSpace(src, at); j < len(src) && src[j] == ',' {
		at, comma = j+1, "" // a trailing comma is already there
	}
	e.splice(at, at, comma+e.nl+ind+jsonQuote(key)+": "+value)
}

// removeMember cuts obj's i-th member out, with its comma and, when it
// has its lines to itself, those lines. removed holds every member of
// obj that goes in the same edit.
func (e *jsonEditor) removeMember(obj *jsonValue, i int, removed map[int]bool) {
	src := e.src
	m := obj.members[i]
	start, end := m.keyStart, m.value.end
	if j := skipSpace(src, end); j < len(src) && src[j] == ',' {
		end = j + 1
	} else {
		// The last member without a trailing comma: the comma after the
		// last member that stays goes instead.
		for k := i - 1; k >= 0; k-- {
			if removed[k] {
				continue
			}
			if c := skipSpace(src, obj.members[k].value.end); c < len(src) && src[c] == ',' {
				e.splice(c, c+1, "")
			}
			break
		}
	}
	ls := bytes.LastIndexByte(src[:start], '\n') + 1
	if len(bytes.TrimSpace(src[ls:start])) == 0 {
		le := bytes.IndexByte(src[end:], '\n')
		if le >= 0 && len(bytes.TrimSpace(src[end:end+le])) == 0 {
			start, end = ls, end+le+1
		}
	}
	e.splice(start, end, "")
}

// lineIndent is the whitespace that starts the line holding offset.
func lineIndent(src []byte, offset int) string {
	ls := bytes.LastIndexByte(src[:offset], '\n') + 1
	i := ls
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	return string(src[ls:i])
}

func (f *File) connectTOML(t Target, remove []string) ([]byte, error) {
	src := f.src
	layout, err := parseTOMLLayout(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	nl := "\n"
	if bytes.Contains(src, []byte("\r\n")) {
		nl = "\r\n"
	}
	var b strings.Builder
	b.WriteString("[mcp_servers." + EntryName + "]" + nl)
	if t.URL != "" {
		b.WriteString("url = " + tomlString(t.URL) + nl)
		if t.TokenEnvVar != "" {
			b.WriteString("bearer_token_env_var = " + tomlString(t.TokenEnvVar) + nl)
		}
	} else {
		args := make([]string, len(t.Args))
		for i, a := range t.Args {
			args[i] = tomlString(a)
		}
		b.WriteString("command = " + tomlString(t.Command) + nl)
		b.WriteString("args = [" + strings.Join(args, ", ") + "]" + nl)
	}
	if t.StartupTimeoutSec > 0 {
		b.WriteString("startup_timeout_sec = " + strconv.Itoa(t.StartupTimeoutSec) + nl)
	}
	entry := b.String()

	var splices []splice
	own, err := layout.serverSpans(EntryName)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	for i, sp := range own {
		text := ""
		if i == 0 {
			text = entry
			if sp[1] < len(src) {
				text += nl
			}
		}
		splices = append(splices, splice{sp[0], sp[1], text})
	}
	for _, name := range remove {
		spans, err := layout.serverSpans(name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		for _, sp := range spans {
			splices = append(splices, splice{sp[0], sp[1], ""})
		}
	}
	if len(own) == 0 {
		sep := ""
		if len(src) > 0 && !bytes.HasSuffix(src, []byte("\n")) {
			sep = nl
		}
		if len(bytes.TrimSpace(src)) > 0 {
			sep += nl
		}
		splices = append(splices, splice{len(src), len(src), sep + entry})
	}
	ed := &jsonEditor{src: src, splices: splices}
	out, err := ed.apply()
	if err != nil {
		return nil, err
	}
	check, err := Parse(f.Client, f.Path, out, f.env)
	if err == nil {
		_, err = check.server(EntryName)
	}
	if err != nil {
		return nil, fmt.Errorf("editing %s would not give a valid config (%v); add [mcp_servers.%s] by hand", f.Path, err, EntryName)
	}
	return out, nil
}

func (f *File) server(name string) (Server, error) {
	for _, s := range f.Servers {
		if s.Name == name {
			return s, nil
		}
	}
	return Server{}, fmt.Errorf("no server %q", name)
}

// tomlString is s as a TOML string: a literal string when it needs no
// escapes (Windows paths read best that way), a basic string otherwise.
func tomlString(s string) string {
	if !strings.ContainsAny(s, "'\n\r\t") && strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) < 0 {
		if strings.Contains(s, `\`) {
			return "'" + s + "'"
		}
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
