package config

import (
	"math"
	"net"
	"net/url"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// DefaultAuthLeeway is how far exp and nbf may be off (clock skew between
// the issuer and this machine) when auth sets no leeway.
const DefaultAuthLeeway = 30 * time.Second

// Auth is serve's auth block: toolgate serve accepts OAuth 2.1 / OIDC
// access tokens (JWT) from Issuer and knows each caller by them.
type Auth struct {
	// Issuer is the authorization server's issuer URL (the iss claim).
	Issuer string
	// JWKSURL is where the issuer's signing keys are; "" = discover it
	// from the issuer's metadata (OIDC discovery, then RFC 8414).
	JWKSURL string
	// Resource is the gateway's own URL as clients know it (RFC 9728
	// resource, RFC 8707 resource indicator).
	Resource string
	// Audiences are the aud values accepted; default [Resource].
	Audiences []string
	// Scopes must all be granted by a token; none by default.
	Scopes []string
	// GroupsClaim names the claim that lists the caller's groups;
	// default "groups".
	GroupsClaim string
	// Claims are further claims copied into the caller's identity.
	Claims []string
	// Leeway is the clock skew allowed for exp and nbf.
	Leeway time.Duration
	// DeclRange is where the block is, for errors found later.
	DeclRange hcl.Range
}

// Limit is one serve limit block: a token bucket (or one per caller,
// per tool, or per both) for the calls it matches.
type Limit struct {
	// Callers are globs over the caller's subject; empty = every caller
	// (including the unknown caller of a setup without auth, "").
	Callers []string
	// Tools are globs over the model-visible tool name; empty = every tool.
	Tools []string
	// PerCaller and PerTool say what has a bucket of its own; neither =
	// one bucket shared by every matched call.
	PerCaller, PerTool bool
	// Calls may be made per Period, on average.
	Calls  int
	Period time.Duration
	// Burst is the bucket size: how many calls may start back to back
	// once the bucket is full (after a quiet spell); default Calls. It does
	// not bound calls in flight: a call takes its token when it starts.
	Burst int
	// DeclRange names the block in texts ("limit at config.hcl:12").
	DeclRange hcl.Range
}

type rawAuth struct {
	Issuer      *hcl.Attribute `hcl:"issuer,optional"`
	JWKSURL     *hcl.Attribute `hcl:"jwks_url,optional"`
	Resource    *hcl.Attribute `hcl:"resource,optional"`
	Audiences   *hcl.Attribute `hcl:"audiences,optional"`
	Scopes      *hcl.Attribute `hcl:"scopes,optional"`
	GroupsClaim *hcl.Attribute `hcl:"groups_claim,optional"`
	Claims      *hcl.Attribute `hcl:"claims,optional"`
	Leeway      *hcl.Attribute `hcl:"leeway,optional"`
	DeclRange   hcl.Range      `hcl:",def_range"`
}

type rawLimit struct {
	Callers   *hcl.Attribute `hcl:"callers,optional"`
	Tools     *hcl.Attribute `hcl:"tools,optional"`
	Per       *hcl.Attribute `hcl:"per,optional"`
	Calls     *hcl.Attribute `hcl:"calls,optional"`
	Period    *hcl.Attribute `hcl:"period,optional"`
	Burst     *hcl.Attribute `hcl:"burst,optional"`
	DeclRange hcl.Range      `hcl:",def_range"`
}

// serveAuth decodes serve's auth block and its conflicts with the rest
// of serve.
func (l *loader) serveAuth(d *decoder, r *rawServe) {
	if r.Auth == nil {
		return
	}
	ra := r.Auth
	a := &Auth{GroupsClaim: "groups", Leeway: DefaultAuthLeeway, DeclRange: ra.DeclRange}
	ok := true
	if ra.Issuer == nil {
		d.errorf(ra.DeclRange, "Missing issuer", "auth needs issuer = \"https://...\", the issuer URL of your authorization server (the iss claim of its tokens).")
		ok = false
	} else if v, set := d.nonEmptyString(ra.Issuer); set {
		ok = d.authURL(ra.Issuer, v) && ok
		a.Issuer = v
	} else {
		ok = false
	}
	if ra.Resource == nil {
		d.errorf(ra.DeclRange, "Missing resource", "auth needs resource = \"https://.../mcp\", the URL clients use to reach this gateway; tokens must be issued for it.")
		ok = false
	} else if v, set := d.nonEmptyString(ra.Resource); set {
		ok = d.authURL(ra.Resource, v) && ok
		a.Resource = v
	} else {
		ok = false
	}
	if v, set := d.nonEmptyString(ra.JWKSURL); set {
		ok = d.authURL(ra.JWKSURL, v) && ok
		a.JWKSURL = v
	}
	if v, set := d.stringList(ra.Audiences); set {
		if len(v) == 0 {
			d.errorf(ra.Audiences.Range, "Empty audiences", "audiences must list at least one value; remove it to accept tokens issued for resource.")
			ok = false
		}
		a.Audiences = v
	} else if a.Resource != "" {
		a.Audiences = []string{a.Resource}
	}
	if v, set := d.stringList(ra.Scopes); set {
		a.Scopes = v
	}
	if v, set := d.nonEmptyString(ra.GroupsClaim); set {
		a.GroupsClaim = v
	}
	if v, set := d.stringList(ra.Claims); set {
		a.Claims = v
	}
	if ra.Leeway != nil {
		f, set := d.number(ra.Leeway)
		s, _ := f.Float64()
		if set && (s < 0 || s > 600) {
			d.errorf(ra.Leeway.Range, "Invalid leeway", "leeway is seconds of clock skew allowed for exp and nbf, between 0 and 600.")
			ok = false
		} else if set {
			a.Leeway = time.Duration(s * float64(time.Second))
		}
	}
	if r.TokenEnvVar != nil {
		d.errorf(r.TokenEnvVar.Range, "Both token_env_var and auth",
			"serve accepts either one static bearer token (token_env_var, for one user) or OAuth access tokens (auth), not both. Remove one of them.")
		ok = false
	}
	if r.AllowPersistentApproval != nil && d.bool(r.AllowPersistentApproval, false) {
		d.errorf(r.AllowPersistentApproval.Range, "Persistent approval with auth",
			"allow_persistent_approval writes an approval into the config, where it would apply to every caller; with auth, callers may only allow a tool for their own session. "+
				"Remove allow_persistent_approval, or set approval_mode in the config yourself.")
		ok = false
	}
	if ok {
		l.cfg.Serve.Auth = a
	}
}

// authURL checks an auth URL: absolute https (http only for a loopback
// host, for testing), no fragment.
func (d *decoder) authURL(a *hcl.Attribute, v string) bool {
	u, err := url.Parse(v)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		d.errorf(a.Range, "Invalid URL", "%s must be an absolute https:// URL, such as \"https://login.example.com/realms/team\".", a.Name)
		return false
	case u.Scheme == "http" && !isLoopbackListen(net.JoinHostPort(u.Hostname(), "0")):
		d.errorf(a.Range, "Insecure URL", "%s must use https://; plain http is accepted for localhost only.", a.Name)
		return false
	case u.Fragment != "":
		d.errorf(a.Range, "Invalid URL", "%s must not have a #fragment.", a.Name)
		return false
	}
	return true
}

// serveLimits decodes serve's limit blocks.
func (l *loader) serveLimits(d *decoder, rs []rawLimit) {
	for i := range rs {
		r := &rs[i]
		lim := Limit{PerCaller: true, Period: time.Minute, DeclRange: r.DeclRange}
		ok := true
		if v, set := d.stringList(r.Callers); set {
			d.globs(r.Callers, v)
			lim.Callers = v
		}
		if v, set := d.stringList(r.Tools); set {
			d.globs(r.Tools, v)
			lim.Tools = v
		}
		if v, set := d.stringList(r.Per); set {
			lim.PerCaller, lim.PerTool = false, false
			for _, p := range v {
				switch p {
				case "caller":
					lim.PerCaller = true
				case "tool":
					lim.PerTool = true
				default:
					d.errorf(r.Per.Range, "Invalid per", "per lists what gets a bucket of its own: \"caller\", \"tool\", both, or [] for one bucket shared by every matched call; %q is not one of them.", p)
					ok = false
				}
			}
		}
		if r.Calls == nil {
			d.errorf(r.DeclRange, "Missing calls", "a limit block needs calls = N, the number of calls allowed per period (default 60 seconds).")
			ok = false
		} else if v, set := d.positiveInt(r.Calls); set {
			lim.Calls = v
		} else {
			ok = false
		}
		if v, set := d.seconds(r.Period); set {
			lim.Period = time.Duration(v * float64(time.Second))
		}
		lim.Burst = lim.Calls
		if v, set := d.int(r.Burst, 1, math.MaxInt32); set {
			lim.Burst = v
		}
		if ok {
			l.cfg.Serve.Limits = append(l.cfg.Serve.Limits, lim)
		}
	}
}
