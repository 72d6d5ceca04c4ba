package config

import (
	"fmt"
	"math"
	"math/big"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/gocty"
)

// decoder evaluates the attributes of one file and collects diagnostics.
// It never puts an evaluated value into a diagnostic unless the value was
// written literally in the file: a value that came from env() or file()
// may be a secret.
type decoder struct {
	ctx   *hcl.EvalContext
	dir   string // absolute directory of the file; relative paths resolve here
	diags hcl.Diagnostics

	// remoteVars collects the env_vars entries with source = "remote" of
	// the server being decoded, for the cross-file environment check.
	remoteVars []remoteVar
}

func (d *decoder) errorf(subject hcl.Range, summary, detail string, args ...any) {
	d.diags = append(d.diags, &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(detail, args...),
		Subject:  subject.Ptr(),
	})
}

func (d *decoder) warnf(subject hcl.Range, summary, detail string, args ...any) {
	d.diags = append(d.diags, &hcl.Diagnostic{
		Severity: hcl.DiagWarning,
		Summary:  summary,
		Detail:   fmt.Sprintf(detail, args...),
		Subject:  subject.Ptr(),
	})
}

// value evaluates a and converts it to ty. ok is false when a is absent,
// null (HCL's way of writing "unset"), or wrong; in the last case a
// diagnostic has been recorded.
func (d *decoder) value(a *hcl.Attribute, ty cty.Type) (cty.Value, bool) {
	if a == nil {
		return cty.NilVal, false
	}
	v, diags := a.Expr.Value(d.ctx)
	d.diags = append(d.diags, diags...)
	if diags.HasErrors() || v.IsNull() {
		return cty.NilVal, false
	}
	if !v.IsWhollyKnown() {
		d.errorf(a.Expr.Range(), "Unknown value", "The value of %s cannot be known while the configuration is loaded.", a.Name)
		return cty.NilVal, false
	}
	cv, err := convert.Convert(v, ty)
	if err != nil {
		d.diags = append(d.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Incorrect attribute value type",
			Detail:   fmt.Sprintf("Inappropriate value for attribute %q: %s.", a.Name, err),
			Subject:  a.Expr.Range().Ptr(),
		})
		return cty.NilVal, false
	}
	if cv.IsNull() {
		return cty.NilVal, false
	}
	return cv, true
}

func (d *decoder) string(a *hcl.Attribute) (string, bool) {
	v, ok := d.value(a, cty.String)
	if !ok {
		return "", false
	}
	return v.AsString(), true
}

// nonEmptyString is string plus a diagnostic for "", which is never a
// useful value for a name, path or URL.
func (d *decoder) nonEmptyString(a *hcl.Attribute) (string, bool) {
	s, ok := d.string(a)
	if !ok {
		return "", false
	}
	if strings.TrimSpace(s) == "" {
		d.errorf(a.Range, "Empty value", "%s must not be empty. Set a value or remove the argument.", a.Name)
		return "", false
	}
	return s, true
}

func (d *decoder) bool(a *hcl.Attribute, fallback bool) bool {
	v, ok := d.value(a, cty.Bool)
	if !ok {
		return fallback
	}
	return v.True()
}

func (d *decoder) number(a *hcl.Attribute) (*big.Float, bool) {
	v, ok := d.value(a, cty.Number)
	if !ok {
		return nil, false
	}
	return v.AsBigFloat(), true
}

// int reads a whole number within [lo, hi].
func (d *decoder) int(a *hcl.Attribute, lo, hi int) (int, bool) {
	f, ok := d.number(a)
	if !ok {
		return 0, false
	}
	i, acc := f.Int64()
	if acc != big.Exact {
		d.errorf(a.Range, "Invalid number", "%s must be a whole number.", a.Name)
		return 0, false
	}
	if i < int64(lo) || i > int64(hi) {
		d.errorf(a.Range, "Value out of range", "%s must be between %d and %d; %d is not.", a.Name, lo, hi, i)
		return 0, false
	}
	return int(i), true
}

// positiveInt reads a whole number > 0.
func (d *decoder) positiveInt(a *hcl.Attribute) (int, bool) {
	return d.int(a, 1, math.MaxInt32)
}

// seconds reads a positive number of seconds; fractions are allowed.
func (d *decoder) seconds(a *hcl.Attribute) (float64, bool) {
	f, ok := d.number(a)
	if !ok {
		return 0, false
	}
	s, _ := f.Float64()
	return d.checkSeconds(a, s)
}

// maxSeconds keeps a duration inside time.Duration; nobody means "300
// years" on purpose.
const maxSeconds = 1e9

func (d *decoder) checkSeconds(a *hcl.Attribute, s float64) (float64, bool) {
	switch {
	case s <= 0:
		d.errorf(a.Range, "Invalid timeout", "%s must be greater than zero. Remove it to use the default, or set a positive number of seconds.", a.Name)
		return 0, false
	case s > maxSeconds:
		d.errorf(a.Range, "Invalid timeout", "%s is too large; the limit is %d seconds.", a.Name, int64(maxSeconds))
		return 0, false
	}
	return s, true
}

func (d *decoder) stringList(a *hcl.Attribute) ([]string, bool) {
	v, ok := d.value(a, cty.List(cty.String))
	if !ok {
		return nil, false
	}
	out := make([]string, 0, v.LengthInt())
	if err := gocty.FromCtyValue(v, &out); err != nil {
		d.errorf(a.Range, "Incorrect attribute value type", "Inappropriate value for attribute %q: %s.", a.Name, err)
		return nil, false
	}
	return out, true
}

func (d *decoder) stringMap(a *hcl.Attribute) (map[string]string, bool) {
	v, ok := d.value(a, cty.Map(cty.String))
	if !ok {
		return nil, false
	}
	out := make(map[string]string, v.LengthInt())
	if err := gocty.FromCtyValue(v, &out); err != nil {
		d.errorf(a.Range, "Incorrect attribute value type", "Inappropriate value for attribute %q: %s.", a.Name, err)
		return nil, false
	}
	return out, true
}

// path reads a path and makes it absolute against the file's directory.
func (d *decoder) path(a *hcl.Attribute) (string, bool) {
	p, ok := d.nonEmptyString(a)
	if !ok {
		return "", false
	}
	return d.resolve(p), true
}

func (d *decoder) resolve(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(d.dir, p)
}

// enum reads a string that must be one of allowed. what names the field in
// the summary ("approval policy").
func (d *decoder) enum(a *hcl.Attribute, what string, allowed []string) (string, bool) {
	s, ok := d.string(a)
	if !ok {
		return "", false
	}
	for _, v := range allowed {
		if s == v {
			return s, true
		}
	}
	d.errorf(a.Range, "Invalid "+what, "%s", enumDetail(a.Name, d.shown(a, s), s, allowed))
	return "", false
}

// enumDetail explains an enum error. shown is how the bad value may be
// printed ("" when it must not be).
func enumDetail(field, shown, got string, allowed []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s must be one of %s", field, quotedList(allowed))
	if shown != "" {
		fmt.Fprintf(&b, "; %s is not", shown)
	}
	b.WriteString(".")
	if s := suggest(got, allowed); s != "" && shown != "" {
		fmt.Fprintf(&b, " Did you mean %q?", s)
	}
	return b.String()
}

// shown returns s quoted when a writes it literally, and "" otherwise:
// a computed value (env(), file()) is never echoed.
func (d *decoder) shown(a *hcl.Attribute, s string) string {
	if !isLiteral(a.Expr) {
		return ""
	}
	return fmt.Sprintf("%q", s)
}

// isLiteral reports whether expr evaluates without any context, i.e.
// contains no function calls or variables.
func isLiteral(expr hcl.Expression) bool {
	_, diags := expr.Value(nil)
	return !diags.HasErrors()
}

func quotedList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = fmt.Sprintf("%q", s)
	}
	switch len(q) {
	case 0:
		return "nothing"
	case 1:
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// itemExprs returns the element expressions of a list written literally
// ([a, b]), so element errors can point at the element. For anything else
// (a function call returning a list) it returns nil.
func itemExprs(expr hcl.Expression) []hcl.Expression {
	items, diags := hcl.ExprList(expr)
	if diags.HasErrors() {
		return nil
	}
	return items
}
