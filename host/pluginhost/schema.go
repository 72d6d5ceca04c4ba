package pluginhost

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/sdk"
)

// mapBlockLabel names the one label of a NestingMap block in diagnostics
// ("Missing name for ...").
const mapBlockLabel = "name"

// specFor turns the schema a plugin reports in Info into the hcldec spec
// the host decodes its config {} body with. nil (no configuration) is an
// empty object: any attribute or block is then reported as unsupported,
// at its line.
func specFor(s *sdk.ConfigSchema) (hcldec.ObjectSpec, error) {
	if s == nil {
		return hcldec.ObjectSpec{}, nil
	}
	return objectSpec(*s, "")
}

func objectSpec(s sdk.ConfigSchema, path string) (hcldec.ObjectSpec, error) {
	spec := hcldec.ObjectSpec{}
	for _, a := range s.Attributes {
		where := path + a.Name
		if _, dup := spec[a.Name]; dup {
			return nil, fmt.Errorf("config schema declares %q twice", where)
		}
		ty, err := ctyjson.UnmarshalType([]byte(a.Type))
		if err != nil {
			return nil, fmt.Errorf("config schema attribute %q: type %s: %w", where, a.Type, err)
		}
		var as hcldec.Spec = &hcldec.AttrSpec{Name: a.Name, Type: ty, Required: a.Required}
		if len(a.Default) > 0 && string(a.Default) != "null" {
			v, err := defaultValue(a.Default, ty)
			if err != nil {
				return nil, fmt.Errorf("config schema attribute %q: default %s: %w", where, a.Default, err)
			}
			as = &hcldec.DefaultSpec{Primary: as, Default: &hcldec.LiteralSpec{Value: v}}
		}
		spec[a.Name] = as
	}
	for _, b := range s.Blocks {
		where := path + b.TypeName
		if _, dup := spec[b.TypeName]; dup {
			return nil, fmt.Errorf("config schema declares %q twice", where)
		}
		nested, err := objectSpec(b.Block, where+".")
		if err != nil {
			return nil, err
		}
		// List and map blocks whose body has an attribute of type
		// "dynamic" cannot be a list or map (elements may differ in type):
		// they decode as a tuple or object instead, which is the same JSON.
		dynamic := hcldec.ImpliedType(nested).HasDynamicTypes()
		switch b.Nesting {
		case sdk.NestingSingle:
			spec[b.TypeName] = &hcldec.BlockSpec{TypeName: b.TypeName, Nested: nested}
		case sdk.NestingList:
			if dynamic {
				spec[b.TypeName] = &hcldec.BlockTupleSpec{TypeName: b.TypeName, Nested: nested}
			} else {
				spec[b.TypeName] = &hcldec.BlockListSpec{TypeName: b.TypeName, Nested: nested}
			}
		case sdk.NestingMap:
			if dynamic {
				spec[b.TypeName] = &hcldec.BlockObjectSpec{TypeName: b.TypeName, LabelNames: []string{mapBlockLabel}, Nested: nested}
			} else {
				spec[b.TypeName] = &hcldec.BlockMapSpec{TypeName: b.TypeName, LabelNames: []string{mapBlockLabel}, Nested: nested}
			}
		default:
			return nil, fmt.Errorf("config schema block %q: unknown nesting %s", where, b.Nesting)
		}
	}
	return spec, nil
}

// defaultValue reads a default given as plain JSON of type ty. For a
// "dynamic" attribute the JSON decides the type.
func defaultValue(raw json.RawMessage, ty cty.Type) (cty.Value, error) {
	if ty == cty.DynamicPseudoType {
		implied, err := ctyjson.ImpliedType(raw)
		if err != nil {
			return cty.NilVal, err
		}
		ty = implied
	}
	return ctyjson.Unmarshal(raw, ty)
}

// decodeConfig decodes body (nil: no config block) with the plugin's
// schema and returns the JSON object Configure receives.
func decodeConfig(name string, body hcl.Body, schema *sdk.ConfigSchema) (json.RawMessage, error) {
	spec, err := specFor(schema)
	if err != nil {
		return nil, fmt.Errorf("%w: plugin %q reported an unusable config schema: %v; this is a bug in the plugin, report it to its author",
			ErrIncompatible, name, err)
	}
	val, diags := config.DecodeConfigBody(body, spec)
	if diags.HasErrors() {
		return nil, &ConfigError{Plugin: name, Diags: diags}
	}
	if val.IsNull() {
		return json.RawMessage("{}"), nil
	}
	out, err := ctyjson.Marshal(val, val.Type())
	if err != nil {
		// Unknown values cannot arise (config bodies have no variables),
		// but a message beats a panic if one does.
		return nil, &ConfigError{Plugin: name, Diags: hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Unusable plugin configuration",
			Detail:   fmt.Sprintf("The configuration of plugin %q cannot be sent to it: %v.", name, err),
			Subject:  rangePtr(hcldec.SourceRange(bodyOrEmpty(body), spec)),
		}}}
	}
	return out, nil
}

// pluginDiagnostics turns Configure's diagnostics into HCL diagnostics
// located in body (the config {} block the values came from); fallback
// is where a diagnostic about the whole block points.
func pluginDiagnostics(name string, diags []sdk.Diagnostic, body hcl.Body, schema *sdk.ConfigSchema, fallback hcl.Range) hcl.Diagnostics {
	var s sdk.ConfigSchema
	if schema != nil {
		s = *schema
	}
	out := make(hcl.Diagnostics, 0, len(diags))
	for _, d := range diags {
		sev := hcl.DiagError
		if d.Severity == sdk.SeverityWarning {
			sev = hcl.DiagWarning
		}
		rng := fallback
		if body != nil && len(d.AttributePath) > 0 {
			rng = locate(body, s, d.AttributePath, fallback)
		}
		detail := d.Detail
		if detail != "" {
			detail += " "
		}
		detail += fmt.Sprintf("(Reported by plugin %q.)", name)
		summary := d.Summary
		if len(d.AttributePath) > 0 && rng == fallback {
			// The source does not show the attribute (it was left out):
			// name it, since the range cannot.
			summary = fmt.Sprintf("%s: %s", strings.Join(d.AttributePath, "."), d.Summary)
		}
		out = append(out, &hcl.Diagnostic{Severity: sev, Summary: summary, Detail: detail, Subject: rangePtr(rng)})
	}
	return out
}

// locate finds the source range an attribute path names in body: the
// attribute's value (or the element of a list or object value), or the
// nested block. Where the path leads nowhere (the user left the attribute
// out), it returns the closest enclosing range found so far.
func locate(body hcl.Body, s sdk.ConfigSchema, path []string, fallback hcl.Range) hcl.Range {
	if len(path) == 0 {
		return fallback
	}
	content, _, _ := body.PartialContent(bodySchema(s))
	if content == nil {
		return fallback
	}
	if attr, ok := content.Attributes[path[0]]; ok {
		return locateInExpr(attr.Expr, path[1:])
	}
	for _, nb := range s.Blocks {
		if nb.TypeName != path[0] {
			continue
		}
		var blocks []*hcl.Block
		for _, b := range content.Blocks {
			if b.Type == nb.TypeName {
				blocks = append(blocks, b)
			}
		}
		if len(blocks) == 0 {
			return fallback
		}
		rest := path[1:]
		var blk *hcl.Block
		switch nb.Nesting {
		case sdk.NestingSingle:
			blk = blocks[0]
		case sdk.NestingList:
			if len(rest) == 0 {
				return blocks[0].DefRange
			}
			i, err := strconv.Atoi(rest[0])
			if err != nil || i < 0 || i >= len(blocks) {
				return blocks[0].DefRange
			}
			blk, rest = blocks[i], rest[1:]
		case sdk.NestingMap:
			if len(rest) == 0 {
				return blocks[0].DefRange
			}
			for _, b := range blocks {
				if len(b.Labels) > 0 && b.Labels[0] == rest[0] {
					blk = b
				}
			}
			if blk == nil {
				return blocks[0].DefRange
			}
			rest = rest[1:]
		}
		if blk == nil {
			return fallback
		}
		return locate(blk.Body, nb.Block, rest, blk.DefRange)
	}
	return fallback
}

// locateInExpr descends into list and object constructors along path.
func locateInExpr(expr hcl.Expression, path []string) hcl.Range {
	if len(path) == 0 {
		return expr.Range()
	}
	if elems, diags := hcl.ExprList(expr); !diags.HasErrors() {
		if i, err := strconv.Atoi(path[0]); err == nil && i >= 0 && i < len(elems) {
			return locateInExpr(elems[i], path[1:])
		}
		return expr.Range()
	}
	if pairs, diags := hcl.ExprMap(expr); !diags.HasErrors() {
		for _, kv := range pairs {
			if objectKey(kv.Key) == path[0] {
				return locateInExpr(kv.Value, path[1:])
			}
		}
	}
	return expr.Range()
}

// objectKey reads a literal object key, bare (name = ...) or quoted
// ("name" = ...).
func objectKey(expr hcl.Expression) string {
	if kw := hcl.ExprAsKeyword(expr); kw != "" {
		return kw
	}
	v, diags := expr.Value(nil)
	if diags.HasErrors() || !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
		return ""
	}
	return v.AsString()
}

// bodySchema is the HCL schema of s, for finding attributes and blocks
// without reporting anything (nothing is required here).
func bodySchema(s sdk.ConfigSchema) *hcl.BodySchema {
	bs := &hcl.BodySchema{}
	for _, a := range s.Attributes {
		bs.Attributes = append(bs.Attributes, hcl.AttributeSchema{Name: a.Name})
	}
	for _, b := range s.Blocks {
		hb := hcl.BlockHeaderSchema{Type: b.TypeName}
		if b.Nesting == sdk.NestingMap {
			hb.LabelNames = []string{mapBlockLabel}
		}
		bs.Blocks = append(bs.Blocks, hb)
	}
	return bs
}

func bodyOrEmpty(b hcl.Body) hcl.Body {
	if b == nil {
		return hcl.EmptyBody()
	}
	return b
}

func rangePtr(r hcl.Range) *hcl.Range {
	if r.Filename == "" && r.Start.Line == 0 {
		return nil
	}
	return &r
}
