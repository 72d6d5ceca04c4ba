package config

import (
	"fmt"
	"math"
	"math/big"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/toolgate/toolgate/internal/glob"
)

// audit decodes the audit block. Its path is the same setting as the
// top-level audit_log (kept for existing configs): one of the two, once.
func (l *loader) audit(d *decoder, r *rawAudit) {
	if r.Path != nil && l.singleton(d, "audit_log", "audit log path (audit_log or audit { path })", r.Path.Range) {
		if p, ok := d.path(r.Path); ok {
			l.cfg.AuditLog = p
		}
	}
	if v, ok := d.enum(r.OnError, "audit on_error", []string{string(AuditOnErrorLog), string(AuditOnErrorDeny)}); ok {
		l.cfg.AuditOnError = AuditOnError(v)
		l.auditOnError = r.OnError
	}
	if r.Rotate != nil {
		if v, ok := d.int(r.Rotate.MaxBytes, 4096, math.MaxInt); ok {
			l.cfg.AuditRotate.MaxBytes = int64(v)
		}
		if r.Rotate.MaxAge != nil {
			if v, ok := d.duration(r.Rotate.MaxAge); ok {
				l.cfg.AuditRotate.MaxAge = v
			}
		}
	}
	if s := r.Signing; s != nil {
		sg := &l.cfg.AuditSigning
		if s.KeyFile != nil {
			if p, ok := d.path(s.KeyFile); ok {
				sg.KeyFile = p
			}
		}
		if s.KeyEnv != nil {
			if v, ok := d.nonEmptyString(s.KeyEnv); ok && d.envName(s.KeyEnv, v) {
				sg.KeyEnv = v
			}
		}
		if (s.KeyFile == nil) == (s.KeyEnv == nil) {
			d.errorf(s.DeclRange, "Audit signing needs one key",
				"Set either key_file = \"ledger.key\" or key_env = \"TOOLGATE_AUDIT_KEY\" in audit { signing }, not both. Create a key with `toolgate audit keygen --out ledger.key`.")
		}
		sg.CheckpointEvery = DefaultCheckpointEvery
		if v, ok := d.int(s.CheckpointEvery, 1, math.MaxInt32); ok {
			sg.CheckpointEvery = v
		}
	}
}

func (l *loader) approval(d *decoder, r *rawApproval) {
	a := &l.cfg.Approval
	if v, ok := d.enum(r.Policy, "approval policy", []string{string(PolicyUntrusted), string(PolicyOnRequest), string(PolicyNever)}); ok {
		a.Policy = Policy(v)
	}
	if v, ok := d.enum(r.Permissions, "permission profile", []string{string(PermReadOnly), string(PermWorkspaceWrite), string(PermFullAccess)}); ok {
		a.Permissions = Permissions(v)
	}
	if v, ok := d.enum(r.Reviewer, "reviewer", []string{string(ReviewerUser), string(ReviewerGuardian)}); ok {
		a.Reviewer = Reviewer(v)
	}
	if v, ok := d.nonEmptyString(r.Guardian); ok {
		a.Guardian = v
		l.guardianAttr = r.Guardian
	}
	l.reviewerAttr, l.approvalRange = r.Reviewer, r.DeclRange
	if r.Inbox != nil {
		a.Inbox = d.inbox(r.Inbox)
	}
}

// inbox reads approval { inbox { ... } }.
func (d *decoder) inbox(r *rawInbox) *Inbox {
	in := &Inbox{Mode: InboxHold, Timeout: DefaultInboxTimeout, Expiry: DefaultInboxExpiry}
	modes := []string{string(InboxHold), string(InboxRetry)}
	if v, ok := d.enum(r.Mode, "inbox mode", modes); ok {
		in.Mode = InboxMode(v)
	}
	if v, ok := d.duration(r.Timeout); ok {
		in.Timeout = v
	}
	if v, ok := d.duration(r.Expiry); ok {
		in.Expiry = v
	}
	if v, ok := d.nonEmptyString(r.URL); ok {
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			d.errorf(r.URL.Range, "Invalid inbox url", "url must be the http(s) base URL approvers reach toolgate serve at, such as \"https://toolgate.example.com\"; %q is not.", v)
		} else {
			in.URL = strings.TrimSuffix(v, "/")
		}
	}
	if v, ok := d.stringList(r.Approvers); ok {
		in.Approvers = v
		d.principals(r.Approvers, v)
	}
	in.SeparateApprover = d.bool(r.SeparateApprover, false)
	for _, rr := range r.Routes {
		rt := InboxRoute{To: RouteClient}
		rt.Servers, _ = d.stringList(rr.Servers)
		rt.Tools, _ = d.stringList(rr.Tools)
		if v, ok := d.stringList(rr.Callers); ok {
			rt.Callers = v
			d.principals(rr.Callers, v)
		}
		if v, ok := d.enum(rr.To, "inbox route", []string{RouteInbox, RouteClient}); ok {
			rt.To = v
		}
		if v, ok := d.enum(rr.Mode, "inbox mode", modes); ok {
			rt.Mode = InboxMode(v)
		}
		in.Routes = append(in.Routes, rt)
	}
	if r.Notify != nil {
		n := &InboxNotify{}
		if v, ok := d.nonEmptyString(r.Notify.URL); ok {
			if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				d.errorf(r.Notify.URL.Range, "Invalid notify url", "url must be an http(s) URL to post pending approvals to; %q is not.", v)
			}
			n.URL = v
		} else if r.Notify.URL == nil {
			d.errorf(r.Notify.DeclRange, "Missing notify url", "A notify block needs url = \"https://…\", the webhook each new pending approval is posted to.")
		}
		n.Headers, _ = d.stringMap(r.Notify.Headers)
		in.Notify = n
	}
	return in
}

// principals checks approver and caller patterns: "sub:…", "group:…" or
// "email:…".
func (d *decoder) principals(a *hcl.Attribute, v []string) {
	for _, p := range v {
		kind, name, ok := strings.Cut(p, ":")
		if !ok || name == "" || (kind != "sub" && kind != "group" && kind != "email") {
			d.errorf(a.Range, "Invalid principal", "%s entries must be \"sub:<subject>\", \"group:<group>\" or \"email:<address>\" of an OAuth caller; %q is not.", a.Name, p)
		}
	}
}

func (l *loader) exposure(d *decoder, r *rawExposure) {
	e := &l.cfg.Exposure
	if v, ok := d.enum(r.Mode, "exposure mode", []string{string(ExposureDirect), string(ExposureDeferred), string(ExposureAuto)}); ok {
		e.Mode = ExposureMode(v)
	}
	if v, ok := d.int(r.NameLimit, MinNameLimit, MaxNameLimit); ok {
		e.NameLimit = v
	}
	l.deferThreshold(d, r.DeferThreshold)
	if v, ok := d.stringList(r.NeverDefer); ok {
		e.NeverDefer = v
		d.globs(r.NeverDefer, v)
	}
	if r.Embeddings != nil {
		e.Embeddings = d.embeddings(r.Embeddings)
	}
}

// embeddings reads exposure { embeddings { url, model, api_key_env_var } }.
func (d *decoder) embeddings(r *rawEmbeddings) *Embeddings {
	e := &Embeddings{}
	if r.URL == nil {
		d.errorf(r.DeclRange, "Missing embeddings url",
			"embeddings needs url = \"...\", the base URL of an OpenAI-compatible API such as \"http://localhost:11434/v1\".")
	} else if v, ok := d.nonEmptyString(r.URL); ok {
		// Like a server's url, it is never echoed: it may carry credentials.
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			d.errorf(r.URL.Range, "Invalid embeddings url",
				"url must be an absolute http:// or https:// URL of an OpenAI-compatible API, such as \"http://localhost:11434/v1\".")
		} else {
			e.URL = v
		}
	}
	if r.Model == nil {
		d.errorf(r.DeclRange, "Missing embeddings model",
			"embeddings needs model = \"...\", the embedding model the endpoint serves (e.g. \"text-embedding-3-small\").")
	} else if v, ok := d.nonEmptyString(r.Model); ok {
		e.Model = v
	}
	if v, ok := d.nonEmptyString(r.APIKeyEnvVar); ok && d.envName(r.APIKeyEnvVar, v) {
		e.APIKeyEnvVar = v
	}
	return e
}

// deferThreshold reads defer_threshold = { tools = N, bytes = N }; either
// key may be left out to keep its default.
func (l *loader) deferThreshold(d *decoder, a *hcl.Attribute) {
	v, ok := d.value(a, cty.DynamicPseudoType)
	if !ok {
		return
	}
	if !v.Type().IsObjectType() && !v.Type().IsMapType() {
		d.errorf(a.Range, "Invalid defer_threshold", "defer_threshold must be an object such as { tools = 50, bytes = 64000 }.")
		return
	}
	keys := []string{"tools", "bytes"}
	for it := v.ElementIterator(); it.Next(); {
		k, elem := it.Element()
		key := k.AsString()
		if !slices.Contains(keys, key) {
			detail := fmt.Sprintf("defer_threshold takes the keys %s; %q is not one of them.", quotedList(keys), key)
			if s := suggest(key, keys); s != "" {
				detail += fmt.Sprintf(" Did you mean %q?", s)
			}
			d.errorf(a.Range, "Unsupported defer_threshold key", "%s", detail)
			continue
		}
		n, err := wholePositive(elem)
		if err != nil {
			d.errorf(a.Range, "Invalid defer_threshold", "defer_threshold.%s %s.", key, err)
			continue
		}
		if key == "tools" {
			l.cfg.Exposure.DeferCount = n
		} else {
			l.cfg.Exposure.DeferBytes = n
		}
	}
}

// wholePositive converts a cty value to an int > 0; the error completes
// the sentence "<field> …".
func wholePositive(v cty.Value) (int, error) {
	if v.IsNull() || !v.IsKnown() {
		return 0, fmt.Errorf("must be set")
	}
	if v.Type() != cty.Number {
		return 0, fmt.Errorf("must be a number")
	}
	i, acc := v.AsBigFloat().Int64()
	if acc != big.Exact || i <= 0 || i > 1<<31-1 {
		return 0, fmt.Errorf("must be a whole number greater than zero")
	}
	return int(i), nil
}

func (l *loader) model(d *decoder, r *rawModel) {
	m := &l.cfg.Model
	m.ImageInput = d.bool(r.ImageInput, m.ImageInput)
	m.AudioInput = d.bool(r.AudioInput, m.AudioInput)
	if v, ok := d.positiveInt(r.OutputBudgetBytes); ok {
		m.OutputBudgetBytes = v
	}
}

func (l *loader) serve(d *decoder, r *rawServe) {
	s := &l.cfg.Serve
	if v, ok := d.nonEmptyString(r.Listen); ok {
		_, port, err := net.SplitHostPort(v)
		if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
			d.errorf(r.Listen.Range, "Invalid listen address", "listen must be host:port, such as %q.", DefaultListen)
		} else {
			s.Listen = v
		}
	}
	if v, ok := d.nonEmptyString(r.TokenEnvVar); ok {
		if d.envName(r.TokenEnvVar, v) {
			s.TokenEnvVar = v
		}
	}
	// Below 1 KiB even an error result would not fit.
	if v, ok := d.int(r.MaxResultBytes, 1024, math.MaxInt32); ok {
		s.MaxResultBytes = v
	}
	if v, ok := d.int(r.MaxSessions, 1, math.MaxInt32); ok {
		s.MaxSessions = v
	}
	s.AllowPersistentApproval = d.bool(r.AllowPersistentApproval, false)
	if v, ok := d.durationOrZero(r.InitialListWait); ok {
		s.InitialListWait = v
	}
	s.ForwardSampling = d.bool(r.ForwardSampling, false)
	l.serveAuth(d, r)
	l.serveLimits(d, r.Limits)
	d.serveOps(&s.Ops, r)
	if s.TokenEnvVar == "" && s.Auth == nil && !isLoopbackListen(s.Listen) {
		rng := r.DeclRange
		if r.Listen != nil {
			rng = r.Listen.Range
		}
		d.warnf(rng, "Gateway listens beyond this machine",
			"listen is not a loopback address, so `toolgate serve --http` will refuse to start without a bearer token. "+
				"Set token_env_var to the name of an environment variable holding the token, or listen on 127.0.0.1.")
	}
}

func isLoopbackListen(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// envName checks that a names an environment variable a shell can set.
func (d *decoder) envName(a *hcl.Attribute, name string) bool {
	if envNamePattern.MatchString(name) {
		return true
	}
	d.errorf(a.Range, "Invalid environment variable name",
		"%s must name an environment variable (letters, digits and _, not starting with a digit). "+
			"It holds the variable's name, not its value.", a.Name)
	return false
}

func (l *loader) plugin(d *decoder, r *rawPlugin, f *hcl.File) {
	p := Plugin{Name: r.Name, DeclRange: r.DeclRange, OnError: OnErrorDeny}

	if r.Kind == nil {
		d.errorf(r.DeclRange, "Missing plugin kind",
			"plugin %q needs kind = %s.", r.Name, quotedList([]string{string(KindHook), string(KindGuardian), string(KindLauncher)}))
	} else if v, ok := d.enum(r.Kind, "plugin kind", []string{string(KindHook), string(KindGuardian), string(KindLauncher)}); ok {
		p.Kind = PluginKind(v)
	}

	if v, ok := d.enum(r.Mode, "plugin mode", []string{"enforce", "shadow"}); ok {
		p.Shadow = v == "shadow"
		if p.Shadow && p.Kind != KindHook {
			d.errorf(r.Mode.Range, "Shadow mode is for hooks",
				"mode = \"shadow\" runs a hook beside the enforced chain; plugin %q is a %s. Remove mode.", r.Name, p.Kind)
		}
	}

	if r.Path == nil {
		d.errorf(r.DeclRange, "Missing plugin path",
			"plugin %q needs path = \"...\", the plugin binary (relative paths are resolved against %s).", r.Name, d.dir)
	} else if v, ok := d.path(r.Path); ok {
		p.Path = v
	}

	if v, ok := d.string(r.SHA256); ok {
		if len(v) != 64 || strings.Trim(strings.ToLower(v), "0123456789abcdef") != "" {
			d.errorf(r.SHA256.Range, "Invalid sha256",
				"sha256 must be 64 hexadecimal characters, the output of `sha256sum %s`; this value has %d characters. "+
					"Remove it to skip the check.", p.Path, len(v))
		} else {
			p.SHA256 = strings.ToLower(v)
		}
	}

	p.Timeout = defaultPluginTimeout(p.Kind)
	if v, ok := d.duration(r.Timeout); ok {
		p.Timeout = v
	}
	if v, ok := d.enum(r.OnError, "on_error value", []string{string(OnErrorDeny), string(OnErrorSkip)}); ok {
		p.OnError = OnError(v)
	}

	if r.Events != nil && p.Kind != "" && p.Kind != KindHook {
		d.errorf(r.Events.Range, "events is only for hook plugins",
			"plugin %q has kind %q; only hook plugins receive events. Remove events, or set kind = \"hook\".", r.Name, p.Kind)
	} else if v, ok := d.stringList(r.Events); ok {
		p.Events = d.hookEvents(r.Events, v)
	}

	if v, ok := d.stringList(r.EnvVars); ok {
		for _, name := range v {
			if !validEnvName(name) {
				d.errorf(r.EnvVars.Range, "Invalid variable name",
					"env_vars of plugin %q lists %q, which is not an environment variable name (letters, digits and _, not starting with a digit).", r.Name, name)
				continue
			}
			p.EnvVars = append(p.EnvVars, name)
		}
	}

	for _, m := range r.Match {
		if p.Kind != "" && p.Kind != KindHook {
			d.errorf(m.DeclRange, "match is only for hook plugins",
				"plugin %q has kind %q; only hook plugins select tools with match blocks. Remove the match block, or set kind = \"hook\".", r.Name, p.Kind)
			continue
		}
		if hm, ok := d.hookMatch(&m); ok {
			p.Match = append(p.Match, hm)
		}
	}

	if r.Config != nil {
		p.Config = newConfigBody(r.Config.Body, f, d.ctx, d.dir)
	}
	l.cfg.Plugins = append(l.cfg.Plugins, p)
}

// duration reads a duration string ("2s", "1m30s") or a number of seconds.
func (d *decoder) duration(a *hcl.Attribute) (time.Duration, bool) {
	v, ok := d.value(a, cty.DynamicPseudoType)
	if !ok {
		return 0, false
	}
	var secs float64
	switch v.Type() {
	case cty.Number:
		secs, _ = v.AsBigFloat().Float64()
	case cty.String:
		dur, err := time.ParseDuration(strings.TrimSpace(v.AsString()))
		if err != nil {
			d.errorf(a.Range, "Invalid duration",
				"%s must be a duration such as \"2s\" or \"1m30s\", or a number of seconds.", a.Name)
			return 0, false
		}
		secs = dur.Seconds()
	default:
		d.errorf(a.Range, "Invalid duration",
			"%s must be a duration such as \"2s\" or \"1m30s\", or a number of seconds.", a.Name)
		return 0, false
	}
	secs, ok = d.checkSeconds(a, secs)
	if !ok {
		return 0, false
	}
	return secondsToDuration(secs), true
}

// durationOrZero reads a duration like duration, and also 0 (as 0,
// "0" or "0s"): a setting where 0 turns something off.
func (d *decoder) durationOrZero(a *hcl.Attribute) (time.Duration, bool) {
	if a == nil {
		return 0, false
	}
	if v, diags := a.Expr.Value(d.ctx); !diags.HasErrors() && v.IsWhollyKnown() && !v.IsNull() {
		switch v.Type() {
		case cty.Number:
			if v.Equals(cty.Zero).True() {
				return 0, true
			}
		case cty.String:
			if dur, err := time.ParseDuration(strings.TrimSpace(v.AsString())); err == nil && dur == 0 {
				return 0, true
			}
		}
	}
	return d.duration(a)
}

func secondsToDuration(s float64) time.Duration {
	return time.Duration(s * float64(time.Second))
}

func (d *decoder) hookEvents(a *hcl.Attribute, events []string) []string {
	out := make([]string, 0, len(events))
	for _, ev := range events {
		if !slices.Contains(hookEvents, ev) {
			d.errorf(a.Range, "Invalid hook event", "%s", enumDetail("each events entry", d.shown(a, ev), ev, hookEvents))
			continue
		}
		out = append(out, ev)
	}
	return out
}

func (d *decoder) hookMatch(m *rawMatch) (HookMatch, bool) {
	var hm HookMatch
	ok := true
	if v, set := d.nonEmptyString(m.Server); set {
		ok = d.glob(m.Server, v) && ok
		hm.Server = v
	}
	if v, set := d.nonEmptyString(m.Tool); set {
		ok = d.glob(m.Tool, v) && ok
		hm.Tool = v
	}
	if v, set := d.nonEmptyString(m.Regex); set {
		if _, err := regexp.Compile(v); err != nil {
			d.errorf(m.Regex.Range, "Invalid regular expression", "regex does not compile: %v. It uses Go (RE2) syntax.", err)
			ok = false
		}
		hm.Regex = v
	}
	if m.Server == nil && m.Tool == nil && m.Regex == nil {
		d.warnf(m.DeclRange, "Empty match block", "A match block with none of server, tool or regex matches every tool. Remove it, or set at least one field.")
	}
	return hm, ok
}

// glob checks a pattern against internal/glob, the one syntax every
// matcher uses, so a bad one is an error at load (with its file and line)
// and never surfaces when the first tool is matched.
func (d *decoder) glob(a *hcl.Attribute, pattern string) bool {
	if _, err := glob.Compile(pattern); err != nil {
		d.errorf(a.Range, "Invalid glob", "%s = %q is not a valid glob: %v. Syntax: %s.", a.Name, pattern, err, glob.Syntax)
		return false
	}
	return true
}

// globs checks each pattern of a list, reporting the first bad one.
func (d *decoder) globs(a *hcl.Attribute, patterns []string) {
	for _, p := range patterns {
		if !d.glob(a, p) {
			return
		}
	}
}

func (l *loader) environment(d *decoder, r *rawEnvironment, f *hcl.File) {
	e := Environment{Name: r.Name, Launcher: LocalLauncher, DeclRange: r.DeclRange}
	if v, ok := d.nonEmptyString(r.Launcher); ok {
		e.Launcher = v
		l.launcherRefs = append(l.launcherRefs, launcherRef{env: r.Name, attr: r.Launcher})
	}
	if v, ok := d.path(r.Cwd); ok {
		e.Cwd = v
	}
	if r.Config != nil {
		e.Config = newConfigBody(r.Config.Body, f, d.ctx, d.dir)
	}
	l.cfg.Environments = append(l.cfg.Environments, e)
}

// crossCheck validates references between blocks, which may live in
// different files. It runs only when every file decoded cleanly, so a
// block that failed to decode is not reported again as "missing". It
// only checks: what one block takes from another is filled in by
// resolve, after every check passed.
func (l *loader) crossCheck(d *decoder) {
	cfg := l.cfg
	pluginsOfKind := func(kind PluginKind) []string {
		var names []string
		for _, p := range cfg.Plugins {
			if p.Kind == kind {
				names = append(names, p.Name)
			}
		}
		return names
	}

	if cfg.AuditOnError == AuditOnErrorDeny && cfg.AuditLog == "" {
		d.errorf(l.auditOnError.Range, "Audit on_error without an audit log",
			"on_error = \"deny\" refuses calls while the audit log cannot be written, but no audit log is configured. Add path = \"audit.jsonl\" to the audit block (or audit_log = \"...\"), or remove on_error.")
	}

	for _, ref := range l.launcherRefs {
		e, _ := cfg.Environment(ref.env)
		if e.Launcher == LocalLauncher {
			continue
		}
		l.checkPluginRef(d, ref.attr, e.Launcher, KindLauncher,
			fmt.Sprintf("environment %q", ref.env), append([]string{LocalLauncher}, pluginsOfKind(KindLauncher)...))
	}

	if cfg.Approval.Guardian != "" {
		l.checkPluginRef(d, l.guardianAttr, cfg.Approval.Guardian, KindGuardian, "approval", pluginsOfKind(KindGuardian))
	} else if cfg.Approval.Reviewer == ReviewerGuardian {
		rng := l.approvalRange
		if l.reviewerAttr != nil {
			rng = l.reviewerAttr.Range
		}
		switch guardians := pluginsOfKind(KindGuardian); len(guardians) {
		case 0:
			d.errorf(rng, "No guardian plugin",
				"reviewer = \"guardian\" needs a plugin block with kind = \"guardian\". Add one, or set reviewer = \"user\".")
		case 1:
		default:
			d.errorf(rng, "Ambiguous guardian plugin",
				"reviewer = \"guardian\" but %d guardian plugins are configured (%s). Name one with guardian = \"...\" in the approval block.",
				len(guardians), quotedList(guardians))
		}
	}

	envNames := []string{LocalEnvironment}
	for _, e := range cfg.Environments {
		if e.Name != LocalEnvironment {
			envNames = append(envNames, e.Name)
		}
	}
	for _, ref := range l.serverRefs {
		s, _ := cfg.Server(ref.server)
		env, ok := cfg.Environment(s.Environment)
		if !ok {
			// A warning, not an error: the rest of the config is usable and
			// the manager fails just this server when it starts.
			detail := fmt.Sprintf("server %q runs in environment %q, which is not defined; the server will fail to start. "+
				"Add an environment %q block, or use one of %s.", s.Name, s.Environment, s.Environment, quotedList(envNames))
			if sug := suggest(s.Environment, envNames); sug != "" {
				detail += fmt.Sprintf(" Did you mean %q?", sug)
			}
			d.diags = append(d.diags, &hcl.Diagnostic{
				Severity: hcl.DiagWarning,
				Summary:  "Unknown environment",
				Detail:   detail,
				Subject:  ref.envAttr.Range.Ptr(),
			})
			continue
		}
		if env.Launcher != LocalLauncher {
			continue
		}
		for _, rv := range ref.remoteVars {
			name := "An env_vars entry"
			if rv.shown {
				name = fmt.Sprintf("env_vars entry %q", rv.name)
			}
			d.errorf(rv.rng, "Remote environment variable on a local server",
				"%s uses source \"remote\", which is read on a remote executor, but server %q runs in environment %q, "+
					"which uses the local launcher. Remove source = \"remote\", or run the server in an environment whose launcher is a launcher plugin.",
				name, s.Name, env.Name)
		}
	}
}

// resolve fills in the defaults one block takes from another, which may
// live in a later file: a server block without forward_sampling takes
// serve's. It runs after crossCheck, only on a configuration without
// errors, and reports nothing.
func (l *loader) resolve() {
	cfg := l.cfg
	for i := range cfg.Servers {
		if cfg.Servers[i].ForwardSampling == nil {
			v := cfg.Serve.ForwardSampling
			cfg.Servers[i].ForwardSampling = &v
		}
	}
}

// checkPluginRef reports a reference to a plugin that is missing or of the
// wrong kind. owner names the referring block for the message.
func (l *loader) checkPluginRef(d *decoder, a *hcl.Attribute, name string, kind PluginKind, owner string, candidates []string) {
	p, ok := l.cfg.Plugin(name)
	switch {
	case !ok:
		detail := fmt.Sprintf("%s names %s %q, but no plugin %q is defined. Add a plugin %q block with kind = %q",
			owner, a.Name, name, name, name, kind)
		if len(candidates) > 0 {
			detail += ", or use one of " + quotedList(candidates)
		}
		detail += "."
		if s := suggest(name, candidates); s != "" {
			detail += fmt.Sprintf(" Did you mean %q?", s)
		}
		d.errorf(a.Range, "Unknown plugin", "%s", detail)
	case p.Kind != kind:
		d.errorf(a.Range, "Wrong plugin kind",
			"%s names plugin %q as its %s, but that plugin has kind %q (defined at %s). Use a plugin with kind = %q.",
			owner, name, a.Name, p.Kind, p.DeclRange, kind)
	}
}

// validEnvName reports whether name can be an environment variable.
func validEnvName(name string) bool {
	if name == "" || (name[0] >= '0' && name[0] <= '9') {
		return false
	}
	for _, c := range name {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
