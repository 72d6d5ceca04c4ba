package config

import (
	"bytes"
	"reflect"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// SameProjection reports whether s and o would run the same client:
// every field is equal except source ranges. Reload keeps a server running
// when its old and new blocks have the same projection, even if the block
// moved within the file or to another file.
//
// An absent list or map equals an empty one where both mean the same
// (args, env, disabled_tools, …); enabled_tools is the exception, since
// unset means "all tools" and [] means "none".
func (s Server) SameProjection(o Server) bool {
	return reflect.DeepEqual(s.projection(), o.projection())
}

func (s Server) projection() Server {
	s.DeclRange = hcl.Range{}
	s.Args = emptyIfNil(s.Args)
	s.EnvVars = emptyIfNil(s.EnvVars)
	s.DisabledTools = emptyIfNil(s.DisabledTools)
	s.Env = emptyMapIfNil(s.Env)
	s.HTTPHeaders = emptyMapIfNil(s.HTTPHeaders)
	s.EnvHTTPHeaders = emptyMapIfNil(s.EnvHTTPHeaders)
	tools := make(map[string]ToolConfig, len(s.Tools))
	for name, t := range s.Tools {
		t.DeclRange = hcl.Range{}
		tools[name] = t
	}
	s.Tools = tools
	if s.OAuth != nil {
		o := *s.OAuth
		o.Scopes = emptyIfNil(o.Scopes)
		s.OAuth = &o
	}
	return s
}

// SameProjection reports whether p and o describe the same plugin process
// and settings. Their config {} bodies compare by source text and by the
// directory file() resolves against; positions do not matter.
func (p Plugin) SameProjection(o Plugin) bool {
	return sameConfigBody(p.Config, o.Config) && reflect.DeepEqual(p.projection(), o.projection())
}

func (p Plugin) projection() Plugin {
	p.DeclRange = hcl.Range{}
	p.Config = nil
	p.Match = emptyIfNil(p.Match)
	p.Events = emptyIfNil(p.Events)
	return p
}

// SameProjection reports whether e and o place servers the same way.
// Their config {} bodies compare as for [Plugin.SameProjection].
func (e Environment) SameProjection(o Environment) bool {
	if !sameConfigBody(e.Config, o.Config) {
		return false
	}
	e.DeclRange, o.DeclRange = hcl.Range{}, hcl.Range{}
	e.Config, o.Config = nil, nil
	return e == o
}

func emptyIfNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func emptyMapIfNil[V any](m map[string]V) map[string]V {
	if m == nil {
		return map[string]V{}
	}
	return m
}

// configBody is a plugin- or environment-owned config {} body, kept with
// what decoding and comparing it later needs: the source text and the
// evaluation context of the file that wrote it (env(), and file() relative
// to that file).
type configBody struct {
	hcl.Body
	src []byte // the body's text including braces; nil when unknown
	dir string
	ctx *hcl.EvalContext
}

func newConfigBody(body hcl.Body, f *hcl.File, ctx *hcl.EvalContext, dir string) hcl.Body {
	cb := &configBody{Body: body, ctx: ctx, dir: dir}
	if sb, ok := body.(*hclsyntax.Body); ok {
		r := sb.SrcRange
		if r.Start.Byte >= 0 && r.Start.Byte <= r.End.Byte && r.End.Byte <= len(f.Bytes) {
			cb.src = f.Bytes[r.Start.Byte:r.End.Byte]
		}
	}
	return cb
}

func sameConfigBody(a, b hcl.Body) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	ca, okA := a.(*configBody)
	cb, okB := b.(*configBody)
	if !okA || !okB {
		return a == b
	}
	if ca.src == nil || cb.src == nil {
		return ca == cb
	}
	return ca.dir == cb.dir && bytes.Equal(ca.src, cb.src)
}

// DecodeConfigBody decodes a [Plugin.Config] or [Environment.Config] body
// with spec, the schema the plugin reports. Expressions in the body may
// call the same functions as the rest of the config (env(), file(), …),
// resolved against the file that wrote the block; env() reads the
// LookupEnv given to [Load]. A nil body decodes as an empty one, so
// required attributes are still reported. Diagnostics keep exact source
// ranges; render them with [WriteDiagnostics].
func DecodeConfigBody(body hcl.Body, spec hcldec.Spec) (cty.Value, hcl.Diagnostics) {
	switch b := body.(type) {
	case nil:
		return hcldec.Decode(hcl.EmptyBody(), spec, nil)
	case *configBody:
		return hcldec.Decode(b.Body, spec, b.ctx)
	default:
		return hcldec.Decode(body, spec, nil)
	}
}

// OffersSampling reports whether toolgate serve offers this server
// sampling (forward_sampling, resolved at load).
func (s Server) OffersSampling() bool {
	return s.ForwardSampling != nil && *s.ForwardSampling
}
