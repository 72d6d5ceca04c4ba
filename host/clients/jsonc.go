package clients

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// The clients' JSON files are JSON with comments where the client allows
// it (VS Code, Cursor, Gemini CLI): // and /* */ comments and trailing
// commas. encoding/json reads neither, and stripping comments with a
// regular expression breaks strings such as "https://x". So this is a
// small reader of our own that also records where every value sits in
// the source, which is what lets connect edit a client's file in place:
// members toolgate does not understand, comments and layout survive
// byte for byte.

// jsonKind is the kind of a parsed value.
type jsonKind int

const (
	jsonNull jsonKind = iota
	jsonBool
	jsonNumber
	jsonString
	jsonArray
	jsonObject
)

// jsonValue is one value of a JSONC document with its byte span.
type jsonValue struct {
	kind       jsonKind
	start, end int // src[start:end] is the value's text
	str        string
	num        string
	b          bool
	elems      []*jsonValue
	members    []jsonMember
}

// jsonMember is one "key": value of an object.
type jsonMember struct {
	key      string
	keyStart int // offset of the key's opening quote
	value    *jsonValue
}

// member returns the value of key, or nil.
func (v *jsonValue) member(key string) *jsonValue {
	if v == nil || v.kind != jsonObject {
		return nil
	}
	// The last duplicate wins, as in JavaScript's JSON.parse.
	for i := len(v.members) - 1; i >= 0; i-- {
		if v.members[i].key == key {
			return v.members[i].value
		}
	}
	return nil
}

// any converts v to the values encoding/json would produce
// (map[string]any, []any, string, json.Number, bool, nil).
func (v *jsonValue) any() any {
	switch v.kind {
	case jsonBool:
		return v.b
	case jsonNumber:
		return json.Number(v.num)
	case jsonString:
		return v.str
	case jsonArray:
		out := make([]any, len(v.elems))
		for i, e := range v.elems {
			out[i] = e.any()
		}
		return out
	case jsonObject:
		out := make(map[string]any, len(v.members))
		for _, m := range v.members {
			out[m.key] = m.value.any()
		}
		return out
	}
	return nil
}

// SyntaxError is a JSONC file that does not parse; Line and Column are
// 1-based.
type SyntaxError struct {
	File         string
	Line, Column int
	Msg          string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
}

type jsoncParser struct {
	src  []byte
	pos  int
	file string
}

// parseJSONC parses src, a JSON document that may hold comments and
// trailing commas. An empty (or comment-only) document is an empty
// object, as the clients treat a missing config.
func parseJSONC(file string, src []byte) (*jsonValue, error) {
	p := &jsoncParser{src: src, file: file}
	if bytes.HasPrefix(src, []byte("\xef\xbb\xbf")) {
		p.pos = 3 // a UTF-8 byte order mark, as Windows editors write
	}
	if err := p.skip(); err != nil {
		return nil, err
	}
	if p.pos == len(src) {
		return &jsonValue{kind: jsonObject, start: p.pos, end: p.pos}, nil
	}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	if err := p.skip(); err != nil {
		return nil, err
	}
	if p.pos != len(src) {
		return nil, p.errorf("unexpected %q after the document", p.src[p.pos])
	}
	return v, nil
}

func (p *jsoncParser) errorf(format string, args ...any) error {
	line, col := 1, 1
	for _, c := range p.src[:min(p.pos, len(p.src))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return &SyntaxError{File: p.file, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// skip passes whitespace and comments.
func (p *jsoncParser) skip() error {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '/':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		case c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '*':
			end := bytes.Index(p.src[p.pos+2:], []byte("*/"))
			if end < 0 {
				return p.errorf("unterminated /* comment")
			}
			p.pos += 2 + end + 2
		default:
			return nil
		}
	}
	return nil
}

func (p *jsoncParser) value() (*jsonValue, error) {
	if p.pos >= len(p.src) {
		return nil, p.errorf("unexpected end of file: a value is missing")
	}
	start := p.pos
	switch c := p.src[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.string()
		if err != nil {
			return nil, err
		}
		return &jsonValue{kind: jsonString, start: start, end: p.pos, str: s}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		for p.pos < len(p.src) && bytes.IndexByte([]byte("+-0123456789.eE"), p.src[p.pos]) >= 0 {
			p.pos++
		}
		num := string(p.src[start:p.pos])
		if !json.Valid([]byte(num)) {
			p.pos = start
			return nil, p.errorf("invalid number %q", num)
		}
		return &jsonValue{kind: jsonNumber, start: start, end: p.pos, num: num}, nil
	}
	for _, lit := range []struct {
		text string
		v    jsonValue
	}{{"true", jsonValue{kind: jsonBool, b: true}}, {"false", jsonValue{kind: jsonBool}}, {"null", jsonValue{kind: jsonNull}}} {
		if bytes.HasPrefix(p.src[p.pos:], []byte(lit.text)) {
			v := lit.v
			v.start, v.end = start, start+len(lit.text)
			p.pos = v.end
			return &v, nil
		}
	}
	return nil, p.errorf("unexpected %q: expected a value", p.src[p.pos])
}

func (p *jsoncParser) object() (*jsonValue, error) {
	v := &jsonValue{kind: jsonObject, start: p.pos}
	p.pos++ // {
	for {
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.src) {
			return nil, p.errorf("unexpected end of file: an object is not closed with }")
		}
		if p.src[p.pos] == '}' {
			p.pos++
			v.end = p.pos
			return v, nil
		}
		if p.src[p.pos] != '"' {
			return nil, p.errorf("unexpected %q: expected a quoted member name or }", p.src[p.pos])
		}
		keyStart := p.pos
		key, err := p.string()
		if err != nil {
			return nil, err
		}
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return nil, p.errorf("expected : after member name %q", key)
		}
		p.pos++
		if err := p.skip(); err != nil {
			return nil, err
		}
		val, err := p.value()
		if err != nil {
			return nil, err
		}
		v.members = append(v.members, jsonMember{key: key, keyStart: keyStart, value: val})
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			p.pos++
			continue // a trailing comma before } is allowed
		}
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			continue
		}
		return nil, p.errorf("expected , or } after the value of %q", key)
	}
}

func (p *jsoncParser) array() (*jsonValue, error) {
	v := &jsonValue{kind: jsonArray, start: p.pos}
	p.pos++ // [
	for {
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.src) {
			return nil, p.errorf("unexpected end of file: an array is not closed with ]")
		}
		if p.src[p.pos] == ']' {
			p.pos++
			v.end = p.pos
			return v, nil
		}
		e, err := p.value()
		if err != nil {
			return nil, err
		}
		v.elems = append(v.elems, e)
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.src) && p.src[p.pos] == ']' {
			continue
		}
		return nil, p.errorf("expected , or ] in an array")
	}
}

// string reads a JSON string literal at p.pos.
func (p *jsoncParser) string() (string, error) {
	start := p.pos
	p.pos++ // "
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == '\\':
			p.pos += 2
		case c == '"':
			p.pos++
			var s string
			if err := json.Unmarshal(p.src[start:p.pos], &s); err != nil {
				p.pos = start
				return "", p.errorf("invalid string: %v", err)
			}
			return s, nil
		case c == '\n':
			return "", p.errorf("a string is not closed before the end of the line")
		default:
			p.pos++
		}
	}
	p.pos = start
	return "", p.errorf("unterminated string")
}

// jsonQuote is s as a JSON string literal, without HTML escaping.
func jsonQuote(s string) string {
	if !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return string(bytes.TrimRight(b.Bytes(), "\n"))
}
