package sdk

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ConfigSchema describes the body of a plugin's config block. The host
// decodes the user's HCL with it, so that errors point at the user's file,
// and hands the plugin the result as a JSON object whose keys are the
// attribute names and nested block type names.
type ConfigSchema struct {
	Attributes []Attribute
	Blocks     []NestedBlock
}

// Attribute is one "name = value" entry of a config block.
type Attribute struct {
	// Name is a valid HCL identifier.
	Name string
	// Type is the value's type in go-cty's JSON type encoding: one of the
	// Type* constants, or built with [ListOf], [SetOf], [MapOf], [ObjectOf].
	Type string
	// Required makes the attribute mandatory.
	Required bool
	// Description is shown in diagnostics and documentation.
	Description string
	// Default is the value (JSON of Type) used when the attribute is
	// absent; nil means null.
	Default json.RawMessage
}

// NestedBlock is a block type that may appear inside a config block.
type NestedBlock struct {
	// TypeName is the block's type name and its key in the decoded JSON.
	TypeName string
	// Nesting says how often the block may appear and how it decodes.
	Nesting Nesting
	// Block describes the nested block's body.
	Block ConfigSchema
	// Description is shown in diagnostics and documentation.
	Description string
}

// Nesting says how often a nested block may appear and how it is decoded.
type Nesting int

// Nesting modes. The zero value is NestingSingle.
const (
	// NestingSingle allows at most one block, decoded as an object (null
	// when absent).
	NestingSingle Nesting = iota
	// NestingList allows any number of unlabelled blocks, decoded as an
	// array.
	NestingList
	// NestingMap allows any number of blocks with one label each, decoded as
	// an object keyed by label.
	NestingMap
)

func (n Nesting) String() string {
	switch n {
	case NestingSingle:
		return "single"
	case NestingList:
		return "list"
	case NestingMap:
		return "map"
	}
	return fmt.Sprintf("Nesting(%d)", int(n))
}

// Primitive types in go-cty's JSON type encoding.
const (
	TypeString  = `"string"`
	TypeNumber  = `"number"`
	TypeBool    = `"bool"`
	TypeDynamic = `"dynamic"` // any value
)

// ListOf returns the type of a list whose elements have type elem.
func ListOf(elem string) string { return `["list",` + elem + `]` }

// SetOf returns the type of a set whose elements have type elem.
func SetOf(elem string) string { return `["set",` + elem + `]` }

// MapOf returns the type of a map whose values have type elem.
func MapOf(elem string) string { return `["map",` + elem + `]` }

// ObjectOf returns the type of an object with the given attribute types.
// Attribute names are sorted, so equal inputs give equal strings.
func ObjectOf(attrs map[string]string) string {
	var b strings.Builder
	b.WriteString(`["object",{`)
	for i, name := range slices.Sorted(maps.Keys(attrs)) {
		if i > 0 {
			b.WriteByte(',')
		}
		quoted, _ := json.Marshal(name) // a string always marshals
		b.Write(quoted)
		b.WriteByte(':')
		b.WriteString(attrs[name])
	}
	b.WriteString(`}]`)
	return b.String()
}

// Severity says whether a diagnostic refuses a configuration.
type Severity int

// Severities. The zero value is SeverityError, so that a diagnostic whose
// severity was forgotten still refuses the configuration.
const (
	SeverityError Severity = iota
	SeverityWarning
)

func (s Severity) String() string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityWarning:
		return "warning"
	}
	return fmt.Sprintf("Severity(%d)", int(s))
}

// Diagnostic is one problem with a configuration, in the style of HCL
// diagnostics.
type Diagnostic struct {
	Severity Severity
	// Summary says what is wrong, in one short sentence.
	Summary string
	// Detail says how to fix it.
	Detail string
	// AttributePath locates the problem in the config block, outermost
	// first: attribute and block type names, the decimal index of a list
	// element, or the label of a map element. Empty means the whole block.
	AttributePath []string
}

// Error makes a Diagnostic usable as an error, e.g. "rule.2.pattern:
// invalid regular expression: missing closing )".
func (d Diagnostic) Error() string {
	var b strings.Builder
	if len(d.AttributePath) > 0 {
		b.WriteString(strings.Join(d.AttributePath, "."))
		b.WriteString(": ")
	}
	b.WriteString(d.Summary)
	if d.Detail != "" {
		b.WriteString(": ")
		b.WriteString(d.Detail)
	}
	return b.String()
}

// HasErrors reports whether any of diags refuses the configuration.
func HasErrors(diags []Diagnostic) bool {
	for _, d := range diags {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}
