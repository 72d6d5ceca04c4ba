package clients

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// NoteKind sorts what Import has to tell.
type NoteKind string

const (
	// NoteSecret: a literal that looked like a credential was replaced by
	// an environment reference; the variable must be set for toolgate.
	NoteSecret NoteKind = "secret"
	// NoteUnsupported: something the client's entry says that the HCL
	// cannot express; it was not imported.
	NoteUnsupported NoteKind = "unsupported"
	// NoteSkipped: the whole server was not imported.
	NoteSkipped NoteKind = "skipped"
	// NoteChanged: imported with a change the user should know about.
	NoteChanged NoteKind = "changed"
)

// Note is one line of Import's summary. Text never holds a secret.
type Note struct {
	Server string
	Kind   NoteKind
	Text   string
}

// Result is what Import produced.
type Result struct {
	// HCL holds one server block per imported server, formatted.
	HCL      []byte
	Imported []string
	Notes    []Note
	// SetEnv lists the variables toolgate's environment must provide for
	// the imported servers to work as they did in the client.
	SetEnv []string
}

// ImportOptions tune Import.
type ImportOptions struct {
	// Existing names servers the toolgate config already has; a server of
	// that name is skipped, not duplicated.
	Existing []string
	// Only, when set, imports just these servers.
	Only []string
	// Env resolves ${workspaceFolder} and ${userHome}.
	Env Env
	// LookupEnv, when set, reports the variables set where toolgate will
	// run: an HTTP server whose bearer token variable is not set is
	// written with enabled = false, since toolgate refuses to load an
	// enabled one (the token is checked at load).
	LookupEnv func(string) (string, bool)
}

var validName = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// Import turns the servers of f into toolgate server blocks.
func Import(f *File, opts ImportOptions) (*Result, error) {
	return importServers(f.Servers, f.flavorFor(), opts)
}

// ImportServers turns servers given on a command line (values taken
// literally, no variable syntax) into toolgate server blocks, with the
// same secret handling as Import.
func ImportServers(servers []Server, opts ImportOptions) (*Result, error) {
	return importServers(servers, "codex", opts)
}

func importServers(servers []Server, flavor string, opts ImportOptions) (*Result, error) {
	res := &Result{}
	existing := map[string]bool{}
	for _, n := range opts.Existing {
		existing[n] = true
	}
	setEnv := map[string]bool{}
	var out strings.Builder
	for _, s := range servers {
		if len(opts.Only) > 0 && !contains(opts.Only, s.Name) {
			continue
		}
		name := s.Name
		if name == EntryName && (s.URL != "" || slices.Contains(s.Args, "serve")) {
			// What connect wrote: importing it would make toolgate serve
			// itself.
			res.Notes = append(res.Notes, Note{s.Name, NoteSkipped, "the entry toolgate connect wrote, which points at toolgate itself"})
			continue
		}
		if !validName.MatchString(name) {
			name = strings.Trim(regexp.MustCompile(`[^a-zA-Z0-9_-]+`).ReplaceAllString(name, "-"), "-")
			if name == "" {
				res.Notes = append(res.Notes, Note{s.Name, NoteSkipped, "its name has no letter or digit; add it with toolgate mcp add under a name of your choice"})
				continue
			}
			res.Notes = append(res.Notes, Note{s.Name, NoteChanged, fmt.Sprintf("renamed to %q: server names use only letters, digits, _ and -", name)})
		}
		if existing[name] {
			res.Notes = append(res.Notes, Note{s.Name, NoteSkipped, fmt.Sprintf("the config already has a server %q; remove it (toolgate mcp remove %s) to import this one", name, name)})
			continue
		}
		existing[name] = true
		b := &blockWriter{server: name, flavor: flavor, env: opts.Env, lookupEnv: opts.LookupEnv}
		b.write(s)
		if out.Len() > 0 {
			out.WriteString("\n")
		}
		out.WriteString(b.text.String())
		res.Imported = append(res.Imported, name)
		for _, u := range s.Unsupported {
			res.Notes = append(res.Notes, Note{s.Name, NoteUnsupported, u})
		}
		res.Notes = append(res.Notes, b.notes...)
		for _, v := range b.setEnv {
			setEnv[v] = true
		}
	}
	for v := range setEnv {
		res.SetEnv = append(res.SetEnv, v)
	}
	sort.Strings(res.SetEnv)
	src := hclwrite.Format([]byte(out.String()))
	if len(src) > 0 && src[len(src)-1] != '\n' {
		src = append(src, '\n')
	}
	// The text is generated, so a parse failure is a bug here; refuse it
	// rather than hand the user a broken file.
	if _, diags := hclsyntax.ParseConfig(src, "import.hcl", hcl.InitialPos); diags.HasErrors() {
		return nil, fmt.Errorf("import produced invalid HCL (a toolgate bug; please report it): %s", diags.Error())
	}
	res.HCL = src
	return res, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// flavorFor is the variable syntax of the file's client.
func (f *File) flavorFor() string {
	switch f.Client.Format {
	case FormatVSCode:
		return "vscode"
	case FormatCodex:
		return "codex"
	}
	return f.Client.flavor
}

// blockWriter writes one server block.
type blockWriter struct {
	server string
	flavor string
	env    Env
	// lookupEnv: see ImportOptions.LookupEnv.
	lookupEnv func(string) (string, bool)
	text      strings.Builder
	notes     []Note
	setEnv    []string
	bearer    string // bearer_token_env_var as written
}

// note records one line of the summary, once: a value is looked at more
// than once on its way to the HCL.
func (b *blockWriter) note(kind NoteKind, format string, args ...any) {
	n := Note{b.server, kind, fmt.Sprintf(format, args...)}
	for _, have := range b.notes {
		if have == n {
			return
		}
	}
	b.notes = append(b.notes, n)
}

func (b *blockWriter) attr(name, expr string) {
	fmt.Fprintf(&b.text, "  %s = %s\n", name, expr)
}

func (b *blockWriter) write(s Server) {
	fmt.Fprintf(&b.text, "server %s {\n", hclString(b.server))
	if s.Command != "" {
		b.stdio(s)
	} else {
		b.http(s)
	}
	if s.Disabled {
		b.attr("enabled", "false")
	} else if b.bearer != "" && b.lookupEnv != nil {
		if v, ok := b.lookupEnv(b.bearer); !ok || strings.TrimSpace(v) == "" {
			b.attr("enabled", "false")
			b.note(NoteChanged, "written with enabled = false: %s is not set here, and toolgate checks the token when it loads; set it, then remove enabled = false", b.bearer)
		}
	}
	if s.StartupTimeoutSec > 0 {
		b.attr("startup_timeout_sec", seconds(s.StartupTimeoutSec))
	}
	if s.ToolTimeoutSec > 0 {
		b.attr("tool_timeout_sec", seconds(s.ToolTimeoutSec))
	}
	if s.EnabledTools != nil {
		b.attr("enabled_tools", b.list(s.EnabledTools, nil))
	}
	if s.DisabledTools != nil {
		b.attr("disabled_tools", b.list(s.DisabledTools, nil))
	}
	b.text.WriteString("}\n")
}

// seconds writes n as HCL wants a number of seconds: whole when it is.
func seconds(n float64) string {
	return strconv.FormatFloat(n, 'f', -1, 64)
}

func (b *blockWriter) stdio(s Server) {
	b.attr("command", b.value(s.Command, "command"))
	if len(s.Args) > 0 {
		b.attr("args", b.list(s.Args, b.argSecret(s.Args)))
	}
	if s.Cwd != "" {
		b.attr("cwd", b.value(s.Cwd, "cwd"))
	}
	envVars := append([]string(nil), s.EnvVars...)
	var env []string
	for _, v := range s.EnvVars {
		b.setEnv = append(b.setEnv, v)
	}
	for _, kv := range s.Env {
		if id, ok := strings.CutPrefix(kv.V, "${input:"); ok && b.flavor == "vscode" && strings.Count(kv.V, "${") == 1 && strings.HasSuffix(id, "}") {
			// The whole value is a VS Code input: toolgate's environment
			// provides it under the variable's own name.
			envVars = append(envVars, kv.K)
			b.setEnv = append(b.setEnv, kv.K)
			b.note(NoteChanged, "env %s came from VS Code input %q; set %s in toolgate's environment (env_vars passes it through)", kv.K, strings.TrimSuffix(id, "}"), kv.K)
			continue
		}
		segs := b.segments(kv.V)
		switch {
		case len(segs) == 1 && segs[0].ref == kv.K && segs[0].def == nil:
			// FOO = "${FOO}": pass the variable through.
			envVars = append(envVars, kv.K)
			b.setEnv = append(b.setEnv, kv.K)
		case !hasRef(segs) && looksSecret(kv.K, kv.V):
			envVars = append(envVars, kv.K)
			b.setEnv = append(b.setEnv, kv.K)
			b.note(NoteSecret, "env %s held a literal secret; it was not copied: set %s in toolgate's environment (env_vars passes it through)", kv.K, kv.K)
		default:
			env = append(env, fmt.Sprintf("%s = %s", hclKey(kv.K), b.expr(b.userinfo(segs, "env "+kv.K))))
		}
	}
	if len(env) > 0 {
		b.attr("env", "{\n    "+strings.Join(env, "\n    ")+"\n  }")
	}
	if len(envVars) > 0 {
		b.attr("env_vars", b.list(dedupe(envVars), nil))
	}
}

// argSecret finds the arguments that look like secrets: a literal after
// a flag that names one (--api-key X), in --flag=X form, or one that
// looks like a token by itself. It returns arg index → variable name.
func (b *blockWriter) argSecret(args []string) map[int]string {
	out := map[int]string{}
	for i, a := range args {
		if hasRef(b.segments(a)) {
			continue
		}
		flag, val := "", a
		if strings.HasPrefix(a, "-") {
			if k, v, ok := strings.Cut(a, "="); ok {
				flag, val = k, v
			} else {
				continue
			}
		} else if i > 0 && strings.HasPrefix(args[i-1], "-") && !strings.Contains(args[i-1], "=") {
			flag = args[i-1]
		}
		if looksSecret(strings.TrimLeft(flag, "-"), val) {
			name := envName(b.server, strings.TrimLeft(flag, "-"))
			if flag == "" {
				name = envName(b.server, "secret_"+strconv.Itoa(i))
			}
			out[i] = name
			b.setEnv = append(b.setEnv, name)
			b.note(NoteSecret, "argument %d held a literal secret; it was not copied: set %s in toolgate's environment", i+1, name)
		}
	}
	return out
}

func (b *blockWriter) http(s Server) {
	b.attr("url", b.value(s.URL, "url"))
	if s.SSE {
		b.note(NoteUnsupported, "it uses the legacy HTTP+SSE transport; toolgate speaks Streamable HTTP, so this works only if the server also serves that at the same URL")
	}
	bearer := s.BearerTokenEnvVar
	var headers, envHeaders []string
	for _, kv := range s.EnvHeaders {
		envHeaders = append(envHeaders, fmt.Sprintf("%s = %s", hclKey(kv.K), hclString(kv.V)))
		b.setEnv = append(b.setEnv, kv.V)
	}
	for _, kv := range s.Headers {
		segs := b.segments(kv.V)
		isAuth := strings.EqualFold(kv.K, "Authorization")
		token, isBearer := strings.CutPrefix(kv.V, "Bearer ")
		tsegs := b.segments(token)
		switch {
		case isAuth && isBearer && bearer == "" && len(tsegs) == 1 && tsegs[0].ref != "":
			bearer = tsegs[0].ref
		case isAuth && isBearer && bearer == "" && !hasRef(tsegs):
			bearer = envName(b.server, "token")
			b.note(NoteSecret, "the Authorization header held a literal token; it was not copied: set %s in toolgate's environment (bearer_token_env_var)", bearer)
		case len(segs) == 1 && segs[0].ref != "" && segs[0].def == nil:
			envHeaders = append(envHeaders, fmt.Sprintf("%s = %s", hclKey(kv.K), hclString(segs[0].ref)))
			b.setEnv = append(b.setEnv, segs[0].ref)
		case !hasRef(segs) && (isAuth || looksSecret(kv.K, kv.V)):
			name := envName(b.server, kv.K)
			envHeaders = append(envHeaders, fmt.Sprintf("%s = %s", hclKey(kv.K), hclString(name)))
			b.setEnv = append(b.setEnv, name)
			b.note(NoteSecret, "header %s held a literal secret; it was not copied: set %s in toolgate's environment (env_http_headers)", kv.K, name)
		default:
			headers = append(headers, fmt.Sprintf("%s = %s", hclKey(kv.K), b.expr(segs)))
		}
	}
	b.bearer = bearer
	if bearer != "" {
		b.attr("bearer_token_env_var", hclString(bearer))
		b.setEnv = append(b.setEnv, bearer)
	}
	if len(headers) > 0 {
		b.attr("http_headers", "{\n    "+strings.Join(headers, "\n    ")+"\n  }")
	}
	if len(envHeaders) > 0 {
		b.attr("env_http_headers", "{\n    "+strings.Join(envHeaders, "\n    ")+"\n  }")
	}
}

var secretQuery = regexp.MustCompile(`([?&])([^=&#]+)=([^&#]*)`)

// value is one string attribute; a secret in a URL's query becomes a
// reference.
func (b *blockWriter) value(s, what string) string {
	if what == "url" && !hasRef(b.segments(s)) {
		s = secretQuery.ReplaceAllStringFunc(s, func(m string) string {
			p := secretQuery.FindStringSubmatch(m)
			if !looksSecret(p[2], p[3]) {
				return m
			}
			name := envName(b.server, p[2])
			b.setEnv = append(b.setEnv, name)
			b.note(NoteSecret, "the URL's %s parameter held a literal secret; it was not copied: set %s in toolgate's environment", p[2], name)
			return p[1] + p[2] + "=${env:" + name + "}"
		})
		return b.expr(b.userinfo(segments(s, "vscode", b), "the URL"))
	}
	return b.expr(b.segments(s))
}

func (b *blockWriter) list(items []string, secrets map[int]string) string {
	parts := make([]string, len(items))
	for i, it := range items {
		if name, ok := secrets[i]; ok {
			if k, _, isFlag := strings.Cut(it, "="); isFlag && strings.HasPrefix(it, "-") {
				parts[i] = b.expr([]segment{{lit: k + "="}, {ref: name}})
			} else {
				parts[i] = b.expr([]segment{{ref: name}})
			}
			continue
		}
		parts[i] = b.expr(b.userinfo(b.segments(it), "argument "+strconv.Itoa(i+1)))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// userInfo matches a URL with a password: scheme://user:password@host.
var userInfo = regexp.MustCompile(`^(.*[a-zA-Z][a-zA-Z0-9+.-]*://[^:/@\s]*:)([^@/\s]+)(@.*)$`)

// userinfo replaces the password of a literal URL (postgres://u:pw@h)
// with a reference.
func (b *blockWriter) userinfo(segs []segment, what string) []segment {
	if len(segs) != 1 || segs[0].ref != "" {
		return segs
	}
	m := userInfo.FindStringSubmatch(segs[0].lit)
	if m == nil {
		return segs
	}
	name := envName(b.server, "password")
	b.setEnv = append(b.setEnv, name)
	b.note(NoteSecret, "%s held a password in a URL; it was not copied: set %s in toolgate's environment", what, name)
	return []segment{{lit: m[1]}, {ref: name}, {lit: m[3]}}
}

// segment is a literal or a reference to an environment variable.
type segment struct {
	lit string
	ref string
	def *string // ${VAR:-default}
}

func hasRef(segs []segment) bool {
	for _, s := range segs {
		if s.ref != "" {
			return true
		}
	}
	return false
}

func (b *blockWriter) segments(s string) []segment { return segments(s, b.flavor, b) }

// The variable syntaxes of the clients: ${VAR} and ${VAR:-default}
// (Claude), ${env:VAR}, ${input:id}, ${workspaceFolder}, ${userHome}
// (VS Code, Cursor), $VAR and ${VAR} (Gemini CLI). Codex expands nothing.
var (
	braceRef = regexp.MustCompile(`\$\{(?:(workspaceFolder|userHome|workspaceFolderBasename|pathSeparator)|(env|input):([^}]+)|([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?)\}`)
	bareRef  = regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_]*)`)
)

func segments(s, flavor string, b *blockWriter) []segment {
	if flavor == "codex" || !strings.Contains(s, "$") {
		return []segment{{lit: s}}
	}
	re := braceRef
	var out []segment
	last := 0
	matches := re.FindAllStringSubmatchIndex(s, -1)
	for _, m := range matches {
		if m[0] > last {
			out = append(out, segment{lit: s[last:m[0]]})
		}
		last = m[1]
		switch {
		case m[8] >= 0: // ${VAR} or ${VAR:-default}
			seg := segment{ref: s[m[8]:m[9]]}
			if m[10] >= 0 {
				d := s[m[10]:m[11]]
				seg.def = &d
			}
			out = append(out, seg)
		case m[4] >= 0 && s[m[4]:m[5]] == "env":
			out = append(out, segment{ref: s[m[6]:m[7]]})
		case m[4] >= 0: // ${input:id}
			id := s[m[6]:m[7]]
			name := envName("", id)
			out = append(out, segment{ref: name})
			if b != nil {
				b.setEnv = append(b.setEnv, name)
				b.note(NoteChanged, "VS Code asked for input %q; toolgate reads it from the environment variable %s instead", id, name)
			}
		default:
			v := s[m[2]:m[3]]
			val := ""
			switch v {
			case "workspaceFolder":
				val = b.env.Cwd
			case "workspaceFolderBasename":
				val = baseName(b.env.Cwd)
			case "userHome":
				val = b.env.Home
			case "pathSeparator":
				val = "/"
				if b.env.GOOS == "windows" {
					val = `\`
				}
			}
			if b != nil {
				b.note(NoteChanged, "${%s} was replaced by %q, its value where import ran", v, val)
			}
			out = append(out, segment{lit: val})
		}
	}
	if last < len(s) {
		out = append(out, segment{lit: s[last:]})
	}
	if flavor == "gemini" {
		// Gemini also expands $VAR.
		var expanded []segment
		for _, seg := range out {
			if seg.ref != "" || !strings.Contains(seg.lit, "$") {
				expanded = append(expanded, seg)
				continue
			}
			l := 0
			for _, m := range bareRef.FindAllStringSubmatchIndex(seg.lit, -1) {
				if m[0] > l {
					expanded = append(expanded, segment{lit: seg.lit[l:m[0]]})
				}
				expanded = append(expanded, segment{ref: seg.lit[m[2]:m[3]]})
				l = m[1]
			}
			if l < len(seg.lit) {
				expanded = append(expanded, segment{lit: seg.lit[l:]})
			}
		}
		out = expanded
	}
	return out
}

func baseName(p string) string {
	p = strings.TrimRight(p, `/\`)
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// expr writes segments as an HCL expression: a string, env("X", ""), or
// a template mixing both. A reference without a default reads "" when
// the variable is unset, so the config loads on any machine; the summary
// lists the variables to set.
func (b *blockWriter) expr(segs []segment) string {
	if len(segs) == 0 {
		return `""`
	}
	call := func(s segment) string {
		def := ""
		if s.def != nil {
			def = *s.def
		}
		return fmt.Sprintf("env(%s, %s)", hclString(s.ref), hclString(def))
	}
	if len(segs) == 1 {
		if segs[0].ref != "" {
			return call(segs[0])
		}
		return hclString(segs[0].lit)
	}
	var t strings.Builder
	t.WriteByte('"')
	for _, s := range segs {
		if s.ref != "" {
			t.WriteString("${" + call(s) + "}")
			continue
		}
		q := hclString(s.lit)
		t.WriteString(q[1 : len(q)-1])
	}
	t.WriteByte('"')
	return t.String()
}

// hclString is s as an HCL string literal, with ${ and %{ escaped so a
// value is never read as a template.
func hclString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		case (c == '$' || c == '%') && i+1 < len(s) && s[i+1] == '{':
			b.WriteByte(c)
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// hclKey is an object key: bare when it can be, quoted otherwise.
func hclKey(k string) string {
	if identifier.MatchString(k) {
		return k
	}
	return hclString(k)
}

// envName makes an environment variable name from parts.
func envName(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('_')
		}
		for _, r := range strings.ToUpper(p) {
			if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '_' {
				b.WriteRune(r)
			} else {
				b.WriteByte('_')
			}
		}
	}
	s := strings.Trim(b.String(), "_")
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		s = "V_" + s
	}
	return s
}

func dedupe(list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

var (
	secretName = regexp.MustCompile(`(?i)(token|secret|passw|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credential|auth|cookie|session)`)
	// Prefixes of well-known credential formats.
	secretPrefix = regexp.MustCompile(`^(ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|sk-|sk_live_|sk_test_|rk_live_|xox[abposr]-|AKIA|ASIA|AIza|ya29\.|eyJ|npm_|hf_|Bearer |Basic )`)
	tokenChars   = regexp.MustCompile(`^[A-Za-z0-9_\-+/=.]{24,}$`)
)

// looksSecret says whether a literal value, named name, is likely a
// credential. It errs on the side of treating a value as secret: the
// cost is one environment variable to set; the cost the other way is a
// token in a config file.
func looksSecret(name, value string) bool {
	v := strings.TrimSpace(value)
	if v == "" {
		return false
	}
	if secretPrefix.MatchString(v) {
		return true
	}
	if secretName.MatchString(name) && len(v) >= 4 && v != "true" && v != "false" {
		return true
	}
	if tokenChars.MatchString(v) && !strings.Contains(v, "/") && !strings.Contains(v, ".") {
		var upper, lower, digit bool
		for _, r := range v {
			switch {
			case r >= 'A' && r <= 'Z':
				upper = true
			case r >= 'a' && r <= 'z':
				lower = true
			case r >= '0' && r <= '9':
				digit = true
			}
		}
		return upper && lower && digit
	}
	return false
}

// quotedValue finds `"key": "value"` (JSON) and `key = "value"` (TOML)
// on one line, and bare quoted strings (list items).
var quotedValue = regexp.MustCompile(`(?:"([^"\\]*)"\s*:\s*|([A-Za-z0-9_.-]+)\s*=\s*)?"((?:[^"\\]|\\.)*)"`)

// RedactLine replaces the string values on a line of a client's file
// that look like credentials with "<redacted>", for showing the file
// (connect --dry-run) without putting its secrets on the screen.
func RedactLine(line string) string {
	return quotedValue.ReplaceAllStringFunc(line, func(m string) string {
		p := quotedValue.FindStringSubmatch(m)
		key := p[1] + p[2]
		val := p[3]
		secret := looksSecret(key, val)
		if !secret && userInfo.MatchString(val) {
			secret = true
		}
		if !secret {
			if tok, ok := strings.CutPrefix(val, "Bearer "); ok && !strings.Contains(tok, "${") {
				secret = tok != ""
			}
		}
		if !secret || strings.Contains(val, "${") || strings.HasPrefix(val, "$") {
			return m
		}
		return strings.TrimSuffix(m, `"`+val+`"`) + `"<redacted>"`
	})
}
