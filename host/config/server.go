package config

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"golang.org/x/net/http/httpguts"
)

func (l *loader) server(d *decoder, r *rawServer) {
	s := defaultServer(r.Name)
	s.DeclRange = r.DeclRange
	// enabled first: a disabled server is never started, so the checks
	// that read the environment skip it.
	s.Enabled = d.bool(r.Enabled, s.Enabled)
	s.Required = d.bool(r.Required, s.Required)
	s.RetryStartup = d.bool(r.RetryStartup, s.RetryStartup)

	if r.BearerToken != nil {
		d.errorf(r.BearerToken.Range, "Inline bearer token refused",
			"bearer_token is not accepted on purpose: a token written into the config ends up in backups, "+
				"repositories and screen shares. Put the token in an environment variable and set "+
				"bearer_token_env_var = \"VARIABLE_NAME\" instead.")
	}

	// The transport follows from which attribute is written, not from
	// whether its value evaluated, so an env() error in command does not
	// also produce a transport error.
	switch hasCommand, hasURL := r.Command != nil, r.URL != nil; {
	case hasCommand && hasURL:
		d.errorf(r.DeclRange, "Invalid transport",
			"server %q sets both command and url: set either command (stdio) or url (streamable_http), not both.", r.Name)
	case hasCommand:
		s.Transport = TransportStdio
		d.unsupported(TransportStdio, r.BearerTokenEnvVar, r.HTTPHeaders, r.EnvHTTPHeaders)
		if r.OAuth != nil {
			d.errorf(r.OAuth.DeclRange, "oauth is not supported for stdio",
				"oauth is not supported for stdio: server %q runs a local command, which authenticates through its own environment. "+
					"Remove the oauth block, or replace command with url for a Streamable HTTP server.", r.Name)
		}
		l.stdio(d, r, &s)
	case hasURL:
		s.Transport = TransportHTTP
		d.unsupported(TransportHTTP, r.Args, r.Env, r.EnvVars, r.Cwd)
		l.http(d, r, &s)
	default:
		d.errorf(r.DeclRange, "Invalid transport",
			"invalid transport: server %q sets neither command nor url. Set command = \"...\" to run a stdio server, "+
				"or url = \"https://...\" to connect to a Streamable HTTP server.", r.Name)
	}

	if v, ok := d.seconds(r.StartupTimeoutSec); ok {
		s.StartupTimeout = secondsToDuration(v)
	}
	if v, ok := d.seconds(r.ToolTimeoutSec); ok {
		s.ToolTimeout = secondsToDuration(v)
	}
	if v, ok := d.stringList(r.EnabledTools); ok {
		s.EnabledTools = v // non-nil even when empty: [] means "no tool"
		d.globs(r.EnabledTools, v)
	}
	if v, ok := d.stringList(r.DisabledTools); ok {
		s.DisabledTools = v
		d.globs(r.DisabledTools, v)
	}
	if v, ok := d.stringList(r.EnabledResources); ok {
		s.EnabledResources = v // [] means "no resource"
		d.globs(r.EnabledResources, v)
	}
	if v, ok := d.stringList(r.DisabledResources); ok {
		s.DisabledResources = v
		d.globs(r.DisabledResources, v)
	}
	if v, ok := d.stringList(r.EnabledPrompts); ok {
		s.EnabledPrompts = v // [] means "no prompt"
		d.globs(r.EnabledPrompts, v)
	}
	if v, ok := d.stringList(r.DisabledPrompts); ok {
		s.DisabledPrompts = v
		d.globs(r.DisabledPrompts, v)
	}
	if v, ok := d.enum(r.ProtocolVersion, "protocol version", append([]string{ProtocolAuto}, protocolVersions...)); ok {
		s.ProtocolVersion = v
	}
	if v, ok := d.nonEmptyString(r.Environment); ok {
		s.Environment = v
	}
	if v, ok := d.enum(r.DefaultToolsApprovalMode, "approval mode", approvalModes); ok {
		s.DefaultToolsApprovalMode = ApprovalMode(v)
	}
	s.Tools = d.tools(r.Tools)
	s.Prefix = d.bool(r.Prefix, s.Prefix)
	if r.ForwardSampling != nil {
		v := d.bool(r.ForwardSampling, false)
		s.ForwardSampling = &v
	}
	s.RedactResults = d.bool(r.RedactResults, s.RedactResults)
	s.RedactSecretFormats = d.bool(r.RedactSecretFormats, s.RedactSecretFormats)
	if v, ok := d.int(r.MaxTools, 1, MaxMaxTools); ok {
		s.MaxTools = v
	}
	if v, ok := d.int(r.MaxDescriptionBytes, 256, MaxToolTextBytes); ok {
		s.MaxDescriptionBytes = v
	}
	if v, ok := d.int(r.MaxSchemaBytes, 256, MaxToolTextBytes); ok {
		s.MaxSchemaBytes = v
	}
	if v, ok := d.enum(r.Exposure, "tool exposure", []string{string(ExposureDirect), string(ExposureDeferred)}); ok {
		s.Exposure = ExposureMode(v)
	}
	s.ParallelToolCalls = d.bool(r.ParallelToolCalls, s.ParallelToolCalls)

	ref := serverRef{server: s.Name, envAttr: r.Environment}
	if s.Transport == TransportStdio {
		ref.remoteVars = d.remoteVars
	}
	d.remoteVars = nil
	if ref.envAttr == nil {
		// The default environment always exists; only the remote-var
		// check needs the reference.
		ref.envAttr = &hcl.Attribute{Name: "environment", Range: r.DeclRange}
	}
	l.serverRefs = append(l.serverRefs, ref)
	l.cfg.Servers = append(l.cfg.Servers, s)
}

var approvalModes = []string{string(ModeAuto), string(ModePrompt), string(ModeWrites), string(ModeApprove), string(ModeRemembered)}

// unsupported reports every attribute in attrs that is written although
// the server's transport does not use it.
func (d *decoder) unsupported(t Transport, attrs ...*hcl.Attribute) {
	other := "url (streamable_http)"
	if t == TransportHTTP {
		other = "command (stdio)"
	}
	for _, a := range attrs {
		if a == nil {
			continue
		}
		d.errorf(a.Range, fmt.Sprintf("%s is not supported for %s", a.Name, t),
			"%s is not supported for %s. Remove it, or switch the server to %s if that is what you meant.", a.Name, t, other)
	}
}

func (l *loader) stdio(d *decoder, r *rawServer, s *Server) {
	if v, ok := d.nonEmptyString(r.Command); ok {
		s.Command = resolveCommand(d, v)
	}
	if v, ok := d.stringList(r.Args); ok {
		s.Args = v
	}
	if v, ok := d.stringMap(r.Env); ok {
		for _, k := range sortedKeys(v) {
			if !envNamePattern.MatchString(k) {
				d.errorf(r.Env.Range, "Invalid environment variable name",
					"env key %q is not a valid environment variable name (letters, digits and _, not starting with a digit).", k)
			}
		}
		s.Env = v
	}
	s.EnvVars = d.envVars(r.EnvVars)
	if v, ok := d.path(r.Cwd); ok {
		s.Cwd = v
	}
}

// resolveCommand makes a relative command with a path separator absolute
// against the config file's directory, so `command = "bin/mcp-demo"` works
// whatever the current directory is. A bare name is kept for the PATH
// lookup at launch.
//
// A Windows absolute path (C:\tools\srv.exe, \\server\share\srv.exe) is
// kept as written on every OS: on Windows it is absolute already, elsewhere
// the launcher refuses it with an error saying it names a Windows program.
func resolveCommand(d *decoder, cmd string) string {
	if !strings.ContainsRune(cmd, '/') && !strings.ContainsRune(cmd, '\\') {
		return cmd
	}
	if windowsAbsPath.MatchString(cmd) {
		return cmd
	}
	return d.resolve(cmd)
}

var windowsAbsPath = regexp.MustCompile(`^([A-Za-z]:[\\/]|\\\\)`)

// envVars reads env_vars = ["NAME", { name = "NAME", source = "remote" }].
func (d *decoder) envVars(a *hcl.Attribute) []EnvVar {
	v, ok := d.value(a, cty.DynamicPseudoType)
	if !ok {
		return nil
	}
	if !v.CanIterateElements() || v.Type().IsMapType() || v.Type().IsObjectType() {
		d.errorf(a.Range, "Invalid env_vars", "env_vars must be a list of names, or of objects such as { name = \"X\", source = \"local\" }.")
		return nil
	}
	items := itemExprs(a.Expr)
	out := make([]EnvVar, 0, v.LengthInt())
	i := 0
	for it := v.ElementIterator(); it.Next(); i++ {
		_, elem := it.Element()
		rng, shown := a.Range, isLiteral(a.Expr)
		if i < len(items) && len(items) == v.LengthInt() {
			rng = items[i].Range()
		}
		if ev, ok := d.envVar(rng, shown, elem); ok {
			if ev.Source == EnvSourceRemote {
				d.remoteVars = append(d.remoteVars, remoteVar{name: ev.Name, rng: rng, shown: shown})
			}
			out = append(out, ev)
		}
	}
	return out
}

func (d *decoder) envVar(rng hcl.Range, shown bool, v cty.Value) (EnvVar, bool) {
	ev := EnvVar{Source: EnvSourceLocal}
	switch {
	case v.IsNull():
		d.errorf(rng, "Invalid env_vars entry", "env_vars entries must not be null.")
		return ev, false
	case v.Type() == cty.String:
		ev.Name = v.AsString()
	case v.Type().IsObjectType() || v.Type().IsMapType():
		keys := []string{"name", "source"}
		for it := v.ElementIterator(); it.Next(); {
			k, elem := it.Element()
			key := k.AsString()
			if !slices.Contains(keys, key) {
				detail := fmt.Sprintf("An env_vars object takes the keys %s; %q is not one of them.", quotedList(keys), key)
				if s := suggest(key, keys); s != "" {
					detail += fmt.Sprintf(" Did you mean %q?", s)
				}
				d.errorf(rng, "Unsupported env_vars key", "%s", detail)
				return ev, false
			}
			if elem.IsNull() || elem.Type() != cty.String {
				d.errorf(rng, "Invalid env_vars entry", "env_vars %s must be a string.", key)
				return ev, false
			}
			if key == "name" {
				ev.Name = elem.AsString()
				continue
			}
			src := elem.AsString()
			if src != string(EnvSourceLocal) && src != string(EnvSourceRemote) {
				q := ""
				if shown {
					q = fmt.Sprintf("%q", src)
				}
				d.errorf(rng, "Invalid env_vars source", "%s",
					enumDetail("source", q, src, []string{string(EnvSourceLocal), string(EnvSourceRemote)}))
				return ev, false
			}
			ev.Source = EnvSource(src)
		}
		if ev.Name == "" {
			d.errorf(rng, "Invalid env_vars entry", "An env_vars object needs name = \"VARIABLE_NAME\".")
			return ev, false
		}
	default:
		d.errorf(rng, "Invalid env_vars entry", "env_vars entries are names (\"HOME\") or objects such as { name = \"X\", source = \"local\" }.")
		return ev, false
	}
	if !envNamePattern.MatchString(ev.Name) {
		what := "An env_vars entry"
		if shown {
			what = fmt.Sprintf("env_vars entry %q", ev.Name)
		}
		d.errorf(rng, "Invalid environment variable name",
			"%s is not a valid environment variable name (letters, digits and _, not starting with a digit). "+
				"env_vars lists names to copy from the host environment, not values.", what)
		return ev, false
	}
	return ev, true
}

func (l *loader) http(d *decoder, r *rawServer, s *Server) {
	if v, ok := d.nonEmptyString(r.URL); ok {
		// The URL is never echoed: it may carry credentials in its
		// userinfo or query.
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			d.errorf(r.URL.Range, "Invalid url",
				"url must be an absolute http:// or https:// URL of the server's MCP endpoint, such as \"https://example.com/mcp\".")
		} else {
			s.URL = v
		}
	}
	if v, ok := d.nonEmptyString(r.BearerTokenEnvVar); ok && d.envName(r.BearerTokenEnvVar, v) {
		s.BearerTokenEnvVar = v
		if s.Enabled {
			l.checkTokenVar(d, r.BearerTokenEnvVar, s.Name, v)
		}
	}
	if v, ok := d.stringMap(r.HTTPHeaders); ok {
		for _, k := range sortedKeys(v) {
			if !httpguts.ValidHeaderFieldName(k) {
				d.errorf(r.HTTPHeaders.Range, "Invalid HTTP header name", "http_headers key %q is not a valid HTTP header name.", k)
			} else if !httpguts.ValidHeaderFieldValue(v[k]) {
				d.errorf(r.HTTPHeaders.Range, "Invalid HTTP header value",
					"The value of http_headers %q contains characters HTTP does not allow (such as a newline).", k)
			} else if strings.EqualFold(k, "Authorization") {
				d.warnf(r.HTTPHeaders.Range, "Credential written inline",
					"http_headers sets Authorization in the config file. Prefer bearer_token_env_var, or env_http_headers "+
						"= { Authorization = \"VARIABLE_NAME\" }, so the secret stays out of the file.")
			}
		}
		s.HTTPHeaders = v
	}
	if v, ok := d.stringMap(r.EnvHTTPHeaders); ok {
		for _, k := range sortedKeys(v) {
			if !httpguts.ValidHeaderFieldName(k) {
				d.errorf(r.EnvHTTPHeaders.Range, "Invalid HTTP header name", "env_http_headers key %q is not a valid HTTP header name.", k)
			} else if !envNamePattern.MatchString(v[k]) {
				d.errorf(r.EnvHTTPHeaders.Range, "Invalid environment variable name",
					"env_http_headers maps header %q to an environment variable name; the value given is not a valid name. "+
						"Write the variable's name, not its value.", k)
			}
		}
		s.EnvHTTPHeaders = v
	}
	if r.OAuth != nil {
		s.OAuth = d.oauth(r.OAuth)
	}
}

// checkTokenVar reads the token variable once, at load, so a missing
// token is reported with a file and line instead of as a 401 later. The
// value itself is never kept or printed; nor is the variable's name when
// it was computed (by env() or file()) rather than written.
func (l *loader) checkTokenVar(d *decoder, a *hcl.Attribute, server, name string) {
	label := "named by bearer_token_env_var"
	if isLiteral(a.Expr) {
		label = name
	}
	v, ok := l.lookupEnv(name)
	switch {
	case !ok:
		d.errorf(a.Range, "Bearer token not set",
			"Environment variable %s for MCP server '%s' is not set. Export it before starting toolgate, "+
				"or set enabled = false on the server.", label, server)
	case strings.TrimSpace(v) == "":
		d.errorf(a.Range, "Bearer token empty",
			"Environment variable %s for MCP server '%s' is empty. Set it to the server's token, "+
				"or set enabled = false on the server.", label, server)
	}
}

var oauthGrants = []string{defaultOAuthGrant, "client_credentials"}

func (d *decoder) oauth(r *rawOAuth) *OAuth {
	o := &OAuth{Grant: defaultOAuthGrant}
	if v, ok := d.nonEmptyString(r.ClientID); ok {
		o.ClientID = v
	}
	if v, ok := d.nonEmptyString(r.ClientSecretEnvVar); ok && d.envName(r.ClientSecretEnvVar, v) {
		o.ClientSecretEnvVar = v
	}
	if v, ok := d.stringList(r.Scopes); ok {
		o.Scopes = v
	}
	if v, ok := d.int(r.CallbackPort, 1, 65535); ok {
		o.CallbackPort = v
	}
	if v, ok := d.nonEmptyString(r.Resource); ok {
		o.Resource = v
	}
	if v, ok := d.enum(r.Grant, "OAuth grant", oauthGrants); ok {
		o.Grant = v
	}
	if v, ok := d.path(r.PrivateKeyFile); ok {
		o.PrivateKeyFile = v
		if o.Grant != "client_credentials" {
			d.errorf(r.PrivateKeyFile.Range, "private_key_file needs client_credentials",
				"private_key_file signs a client assertion for the client_credentials grant. Set grant = \"client_credentials\", or remove private_key_file.")
		}
	}
	if o.Grant == "client_credentials" && o.ClientID == "" && r.ClientID == nil {
		d.errorf(r.DeclRange, "Missing client_id",
			"The client_credentials grant needs client_id = \"...\" (and client_secret_env_var or private_key_file).")
	}
	return o
}

// tools reads the tool "<raw name>" { approval_mode } blocks.
func (d *decoder) tools(blocks []rawTool) map[string]ToolConfig {
	if len(blocks) == 0 {
		return nil
	}
	out := make(map[string]ToolConfig, len(blocks))
	first := make(map[string]hcl.Range, len(blocks))
	for _, b := range blocks {
		if prev, ok := first[b.Name]; ok {
			d.errorf(b.DeclRange, fmt.Sprintf("Duplicate tool %q", b.Name),
				"A tool %q block was already written at %s. Keep one of them.", b.Name, prev)
			continue
		}
		first[b.Name] = b.DeclRange
		if b.ApprovalMode == nil {
			d.warnf(b.DeclRange, "Empty tool block",
				"tool %q sets nothing, so it has no effect. Add approval_mode = %s, or remove the block.", b.Name, quotedList(approvalModes))
			continue
		}
		if v, ok := d.enum(b.ApprovalMode, "approval mode", approvalModes); ok {
			tc := ToolConfig{ApprovalMode: ApprovalMode(v), DeclRange: b.DeclRange}
			if def, set := d.nonEmptyString(b.ApprovedDefinition); set {
				switch {
				case !definitionPattern.MatchString(def):
					d.errorf(b.ApprovedDefinition.Range, "Invalid approved_definition",
						"approved_definition must be \"sha256:\" followed by 64 lowercase hex digits, as \"Allow and don't ask me again\" writes it; %q is not. Remove the line to be asked again.", def)
				case tc.ApprovalMode != ModeRemembered:
					d.warnf(b.ApprovedDefinition.Range, "approved_definition has no effect",
						"approved_definition binds a remembered approval to the tool's definition; with approval_mode = %q it is ignored. Remove it.", v)
				default:
					tc.ApprovedDefinition = def
				}
			}
			out[b.Name] = tc
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
