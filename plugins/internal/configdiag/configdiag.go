package configdiag

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/toolgate/toolgate/sdk"
)

// Set collects diagnostics.
type Set struct {
	list []sdk.Diagnostic
}

// Error records a problem that refuses the configuration.
func (s *Set) Error(path []string, summary, detail string) {
	s.list = append(s.list, sdk.Diagnostic{
		Severity: sdk.SeverityError, Summary: summary, Detail: detail, AttributePath: clone(path),
	})
}

// Warning records a problem that is reported but accepted.
func (s *Set) Warning(path []string, summary, detail string) {
	s.list = append(s.list, sdk.Diagnostic{
		Severity: sdk.SeverityWarning, Summary: summary, Detail: detail, AttributePath: clone(path),
	})
}

// List returns the diagnostics recorded so far.
func (s *Set) List() []sdk.Diagnostic { return s.list }

// HasErrors reports whether an error was recorded.
func (s *Set) HasErrors() bool { return sdk.HasErrors(s.list) }

// Path builds an attribute path: strings are used as they are, ints become
// list indexes.
func Path(parts ...any) []string {
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			out = append(out, v)
		case int:
			out = append(out, strconv.Itoa(v))
		default:
			panic(fmt.Sprintf("configdiag.Path: unsupported part %T", p))
		}
	}
	return out
}

func clone(path []string) []string {
	if len(path) == 0 {
		return nil
	}
	return append([]string(nil), path...)
}

// Decode unmarshals raw into v, refusing keys v does not know. A failure is
// recorded on s (with no attribute path: the JSON comes from the host, so a
// shape error means the host and plugin disagree on the schema) and Decode
// returns false.
func Decode(s *Set, raw json.RawMessage, v any) bool {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		s.Error(nil, "Invalid plugin configuration",
			fmt.Sprintf("The configuration does not fit the plugin's schema (%v). Check the config block against the plugin's README; if it is right, the host and the plugin are of different versions.", err))
		return false
	}
	return true
}

// Duration parses a duration attribute such as "30s". Empty text gives def.
// A bad or non-positive value is recorded at path and gives def.
func Duration(s *Set, path []string, text *string, def time.Duration) time.Duration {
	if text == nil || *text == "" {
		return def
	}
	d, err := time.ParseDuration(*text)
	if err != nil || d <= 0 {
		name := "value"
		if len(path) > 0 {
			name = path[len(path)-1]
		}
		s.Error(path, "Invalid duration",
			fmt.Sprintf("%s must be a positive duration such as \"30s\" or \"1m30s\", not %q.", name, *text))
		return def
	}
	return d
}
