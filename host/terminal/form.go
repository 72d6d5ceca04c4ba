package terminal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// fieldKind is how a form field is asked and parsed.
type fieldKind int

const (
	kindString  fieldKind = iota
	kindNumber            // JSON number
	kindInteger           // whole number
	kindBoolean           // y/n
	kindEnum              // one of a list
	kindMulti             // any of a list (array of enum)
	kindJSON              // a type the form spec does not define: a JSON value
)

type option struct {
	value any
	label string
}

// field is one property of a requested elicitation schema.
type field struct {
	name, title, description, format string
	kind                             fieldKind
	required                         bool
	// secret fields (format password or secret, or writeOnly) are never
	// printed back: not their default, not the answer.
	secret     bool
	def        any
	hasDefault bool
	options    []option
	minimum    *float64
	maximum    *float64
	minLength  *int
	maxLength  *int
	minItems   *int
	maxItems   *int
}

type titledValue struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

type itemsSchema struct {
	Type  string        `json:"type"`
	Enum  []any         `json:"enum"`
	AnyOf []titledValue `json:"anyOf"`
	OneOf []titledValue `json:"oneOf"`
}

type propertySchema struct {
	Type        json.RawMessage `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Format      string          `json:"format"`
	Default     json.RawMessage `json:"default"`
	Enum        []any           `json:"enum"`
	EnumNames   []string        `json:"enumNames"`
	OneOf       []titledValue   `json:"oneOf"`
	Items       *itemsSchema    `json:"items"`
	Minimum     *float64        `json:"minimum"`
	Maximum     *float64        `json:"maximum"`
	MinLength   *int            `json:"minLength"`
	MaxLength   *int            `json:"maxLength"`
	MinItems    *int            `json:"minItems"`
	MaxItems    *int            `json:"maxItems"`
	WriteOnly   bool            `json:"writeOnly"`
}

// parseForm reads the fields of a requested schema in the order the
// server wrote them (a schema given as a Go map has no order; its fields
// come sorted by name).
func parseForm(schema any) ([]field, error) {
	raw, err := schemaJSON(schema)
	if err != nil || raw == nil {
		return nil, err
	}
	var top struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("read requested schema: %w", err)
	}
	props, err := orderedObject(top.Properties)
	if err != nil {
		return nil, fmt.Errorf("read requested schema properties: %w", err)
	}
	required := map[string]bool{}
	for _, r := range top.Required {
		required[r] = true
	}
	fields := make([]field, 0, len(props))
	for _, p := range props {
		var ps propertySchema
		if err := json.Unmarshal(p.value, &ps); err != nil {
			return nil, fmt.Errorf("read property %q: %w", p.key, err)
		}
		fields = append(fields, newField(p.key, ps, required[p.key]))
	}
	return fields, nil
}

func schemaJSON(schema any) ([]byte, error) {
	switch s := schema.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return s, nil
	case []byte:
		return s, nil
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("encode requested schema: %w", err)
	}
	return b, nil
}

type keyValue struct {
	key   string
	value json.RawMessage
}

// orderedObject returns the members of a JSON object in document order.
func orderedObject(raw json.RawMessage) ([]keyValue, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out []keyValue
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, keyValue{key, v})
	}
	return out, nil
}

func newField(name string, ps propertySchema, required bool) field {
	f := field{
		name:        name,
		title:       ps.Title,
		description: ps.Description,
		format:      ps.Format,
		required:    required,
		secret:      ps.WriteOnly || ps.Format == "password" || ps.Format == "secret",
		minimum:     ps.Minimum,
		maximum:     ps.Maximum,
		minLength:   ps.MinLength,
		maxLength:   ps.MaxLength,
		minItems:    ps.MinItems,
		maxItems:    ps.MaxItems,
	}
	typ := jsonType(ps.Type)
	switch {
	case len(ps.Enum) > 0:
		f.kind = kindEnum
		for i, v := range ps.Enum {
			label := ""
			if i < len(ps.EnumNames) {
				label = ps.EnumNames[i]
			}
			f.options = append(f.options, option{value: v, label: label})
		}
	case len(ps.OneOf) > 0:
		f.kind = kindEnum
		f.options = titledOptions(ps.OneOf)
	case typ == "array" && ps.Items != nil:
		f.kind = kindMulti
		for _, v := range ps.Items.Enum {
			f.options = append(f.options, option{value: v})
		}
		f.options = append(f.options, titledOptions(ps.Items.AnyOf)...)
		f.options = append(f.options, titledOptions(ps.Items.OneOf)...)
		if len(f.options) == 0 {
			f.kind = kindJSON
		}
	case typ == "string":
		f.kind = kindString
	case typ == "number":
		f.kind = kindNumber
	case typ == "integer":
		f.kind = kindInteger
	case typ == "boolean":
		f.kind = kindBoolean
	default:
		f.kind = kindJSON
	}
	if d := bytes.TrimSpace(ps.Default); len(d) > 0 && string(d) != "null" {
		var v any
		if json.Unmarshal(d, &v) == nil {
			if n, ok := v.(float64); ok && f.kind == kindInteger && n == math.Trunc(n) {
				v = int64(n)
			}
			f.def, f.hasDefault = v, true
		}
	}
	return f
}

func titledOptions(vs []titledValue) []option {
	out := make([]option, 0, len(vs))
	for _, v := range vs {
		out = append(out, option{value: v.Const, label: v.Title})
	}
	return out
}

// jsonType reads "type": a string, or a list such as ["string","null"]
// of which the first non-null entry counts.
func jsonType(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		for _, t := range list {
			if t != "null" {
				return t
			}
		}
	}
	return ""
}

// label is how the field is named on screen.
func (f field) label() string {
	if f.title != "" && f.title != f.name {
		return clean(f.title) + " [" + clean(f.name) + "]"
	}
	return clean(f.name)
}

// describe says what kind of answer the field takes.
func (f field) describe() string {
	var what string
	switch f.kind {
	case kindString:
		what = "text"
		switch f.format {
		case "email":
			what = "email address"
		case "uri":
			what = "URL"
		case "date":
			what = "date, YYYY-MM-DD"
		case "date-time":
			what = "date and time, e.g. 2025-01-31T14:00:00Z"
		case "password", "secret":
			what = "secret text, not shown again"
		}
		if f.minLength != nil {
			what += fmt.Sprintf(", at least %d characters", *f.minLength)
		}
		if f.maxLength != nil {
			what += fmt.Sprintf(", at most %d characters", *f.maxLength)
		}
	case kindNumber, kindInteger:
		what = "number"
		if f.kind == kindInteger {
			what = "whole number"
		}
		switch {
		case f.minimum != nil && f.maximum != nil:
			what += fmt.Sprintf(" from %s to %s", num(*f.minimum), num(*f.maximum))
		case f.minimum != nil:
			what += " ≥ " + num(*f.minimum)
		case f.maximum != nil:
			what += " ≤ " + num(*f.maximum)
		}
	case kindBoolean:
		what = "y/n"
	case kindEnum:
		what = "choose one: a number or a value"
	case kindMulti:
		what = "choose any: numbers or values, separated by commas"
	case kindJSON:
		what = "a JSON value"
	}
	if f.required {
		return what + "; required"
	}
	return what + "; optional"
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// show renders an answer or default for the screen.
func (f field) show(v any) string {
	if f.secret {
		return "********"
	}
	switch f.kind {
	case kindBoolean:
		if b, ok := v.(bool); ok {
			if b {
				return "yes"
			}
			return "no"
		}
	case kindEnum:
		return f.optionLabel(v)
	case kindMulti:
		if list, ok := v.([]any); ok {
			parts := make([]string, len(list))
			for i, x := range list {
				parts[i] = f.optionLabel(x)
			}
			return strings.Join(parts, ", ")
		}
	}
	if s, ok := v.(string); ok {
		return truncateMiddle(clean(s), maxLineRunes)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return truncateMiddle(clean(string(b)), maxLineRunes)
}

func (f field) optionLabel(v any) string {
	value := clean(fmt.Sprint(v))
	for _, o := range f.options {
		if fmt.Sprint(o.value) == fmt.Sprint(v) && o.label != "" && o.label != fmt.Sprint(v) {
			return clean(o.label) + " (" + value + ")"
		}
	}
	return value
}

// parse turns a non-empty answer into the field's value, or says what is
// wrong with it in words the user can act on.
func (f field) parse(answer string) (any, error) {
	trimmed := strings.TrimSpace(answer)
	switch f.kind {
	case kindString:
		return answer, f.checkString(answer)
	case kindNumber:
		v, err := strconv.ParseFloat(trimmed, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errors.New("that is not a number")
		}
		return v, f.checkRange(v)
	case kindInteger:
		v, err := strconv.ParseInt(trimmed, 10, 64)
		if err != nil {
			return nil, errors.New("that is not a whole number")
		}
		return v, f.checkRange(float64(v))
	case kindBoolean:
		switch strings.ToLower(trimmed) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, errors.New("please answer y or n")
	case kindEnum:
		return f.pick(trimmed)
	case kindMulti:
		var out []any
		for part := range strings.SplitSeq(trimmed, ",") {
			if part = strings.TrimSpace(part); part == "" {
				continue
			}
			v, err := f.pick(part)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		if f.minItems != nil && len(out) < *f.minItems {
			return nil, fmt.Errorf("choose at least %d", *f.minItems)
		}
		if f.maxItems != nil && len(out) > *f.maxItems {
			return nil, fmt.Errorf("choose at most %d", *f.maxItems)
		}
		return out, nil
	}
	var v any
	if err := json.Unmarshal([]byte(trimmed), &v); err != nil {
		return nil, errors.New("that is not a JSON value (strings need double quotes)")
	}
	return v, nil
}

// pick finds an option by its number in the list, its value or its label.
func (f field) pick(answer string) (any, error) {
	if n, err := strconv.Atoi(answer); err == nil && n >= 1 && n <= len(f.options) {
		return f.options[n-1].value, nil
	}
	for _, o := range f.options {
		if fmt.Sprint(o.value) == answer {
			return o.value, nil
		}
	}
	for _, o := range f.options {
		if o.label != "" && strings.EqualFold(o.label, answer) {
			return o.value, nil
		}
	}
	return nil, fmt.Errorf("%q is not one of the choices; type its number", clean(answer))
}

func (f field) checkString(s string) error {
	n := utf8.RuneCountInString(s)
	if f.minLength != nil && n < *f.minLength {
		return fmt.Errorf("that is too short: at least %d characters", *f.minLength)
	}
	if f.maxLength != nil && n > *f.maxLength {
		return fmt.Errorf("that is too long: at most %d characters", *f.maxLength)
	}
	switch f.format {
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return errors.New("that is not an email address (like name@example.com)")
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			return errors.New("that is not a URL (like https://example.com/path)")
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return errors.New("that is not a date (YYYY-MM-DD)")
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return errors.New("that is not a date and time (like 2025-01-31T14:00:00Z)")
		}
	}
	return nil
}

func (f field) checkRange(v float64) error {
	if f.minimum != nil && v < *f.minimum {
		return fmt.Errorf("that is below the minimum of %s", num(*f.minimum))
	}
	if f.maximum != nil && v > *f.maximum {
		return fmt.Errorf("that is above the maximum of %s", num(*f.maximum))
	}
	return nil
}
