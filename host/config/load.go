package config

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclparse"
)

// LoadOptions are the inputs of [Load] besides the path. The zero value
// reads the process environment.
type LoadOptions struct {
	// LookupEnv reads environment variables for env() and for the checks
	// of bearer_token_env_var. nil means os.LookupEnv. Load is the only
	// place the environment is read; tests pass a fake.
	LookupEnv func(string) (string, bool)
	// Replace gives the text to read instead of a file's (by absolute
	// path), so an edit is validated exactly as it would load before it
	// is written.
	Replace map[string][]byte
}

// Load reads the config at path, a file or a directory. For a directory,
// every *.hcl file directly in it (dot files excepted) is read in lexical
// order and merged: servers, plugins and environments accumulate, while
// the singletons (approval, exposure, model, serve blocks and audit_log)
// may be written in at most one file.
//
// The returned diagnostics may hold warnings alongside a valid config.
// When diags.HasErrors(), the Config is not usable: only Paths, Dir and
// Files are filled, so that the caller can render the diagnostics with
// [WriteDiagnostics].
func Load(path string, opts LoadOptions) (*Config, hcl.Diagnostics) {
	lookupEnv := opts.LookupEnv
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}

	paths, dir, diags := listFiles(path)
	parser := hclparse.NewParser()
	cfg := defaultConfig()
	cfg.Paths, cfg.Dir = paths, dir
	l := &loader{
		cfg:        &cfg,
		lookupEnv:  lookupEnv,
		singletons: map[string]hcl.Range{},
		plugins:    map[string]hcl.Range{},
		envs:       map[string]hcl.Range{},
		servers:    map[string]hcl.Range{},
	}
	for _, p := range paths {
		var f *hcl.File
		var parseDiags hcl.Diagnostics
		if src, ok := opts.Replace[p]; ok {
			f, parseDiags = parser.ParseHCL(src, p)
		} else {
			f, parseDiags = parser.ParseHCLFile(p)
		}
		diags = append(diags, parseDiags...)
		if f == nil || parseDiags.HasErrors() {
			continue
		}
		fileDir := filepath.Dir(p)
		d := &decoder{ctx: evalContext(fileDir, lookupEnv), dir: fileDir}
		l.file(d, f)
		diags = append(diags, d.diags...)
	}
	if !diags.HasErrors() {
		d := &decoder{}
		l.crossCheck(d)
		diags = append(diags, d.diags...)
	}
	if !diags.HasErrors() {
		l.resolve()
	}

	sortDiagnostics(diags, paths)
	files := parser.Files()
	if diags.HasErrors() {
		return &Config{Paths: paths, Dir: dir, Files: files}, diags
	}
	cfg.Files = files
	return &cfg, diags
}

// sortDiagnostics orders diags as a reader meets them: by file in load
// order, then by position. Diagnostics without a position come first.
func sortDiagnostics(diags hcl.Diagnostics, paths []string) {
	fileIndex := func(d *hcl.Diagnostic) (int, int) {
		if d.Subject == nil {
			return -1, 0
		}
		return slices.Index(paths, d.Subject.Filename), d.Subject.Start.Byte
	}
	slices.SortStableFunc(diags, func(a, b *hcl.Diagnostic) int {
		fa, pa := fileIndex(a)
		fb, pb := fileIndex(b)
		if c := cmp.Compare(fa, fb); c != 0 {
			return c
		}
		return cmp.Compare(pa, pb)
	})
}

// listFiles turns the --config argument into the files to read and the
// directory relative paths in Config refer to.
func listFiles(path string) (paths []string, dir string, diags hcl.Diagnostics) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, "", hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Invalid config path",
			Detail:   fmt.Sprintf("Cannot resolve %s: %v. Pass the config file or directory with --config.", path, err),
		}}
	}
	info, err := os.Stat(abs)
	if err != nil {
		return nil, filepath.Dir(abs), hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Config not found",
			Detail: fmt.Sprintf("Cannot read %s: %v. Pass an existing file or directory with --config, "+
				"or copy config.hcl.example to toolgate.hcl to start.", abs, unwrapPathError(err)),
		}}
	}
	if !info.IsDir() {
		return []string{abs}, filepath.Dir(abs), nil
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, abs, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Config directory not readable",
			Detail:   fmt.Sprintf("Cannot list %s: %v. Check its permissions, or pass a single file with --config.", abs, unwrapPathError(err)),
		}}
	}
	for _, e := range entries {
		name := e.Name()
		// Dot files are editor swap and lock files (.#x.hcl), never config.
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".hcl") {
			continue
		}
		full := filepath.Join(abs, name)
		if st, err := os.Stat(full); err != nil || !st.Mode().IsRegular() {
			continue
		}
		paths = append(paths, full)
	}
	// os.ReadDir returns names sorted, which is the documented merge order.
	if len(paths) == 0 {
		return nil, abs, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "No config files",
			Detail:   fmt.Sprintf("The directory %s holds no *.hcl files. Add one (see config.hcl.example) or pass a file with --config.", abs),
		}}
	}
	return paths, abs, nil
}

// unwrapPathError drops the path an *os.PathError repeats, since the
// message names the path already.
func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// rawTop is the first decoding pass: it splits a file into blocks without
// looking inside them, so that one broken block does not hide the others
// and a block whose body fails the schema is not validated further (no
// cascade of follow-up errors from a typo).
type rawTop struct {
	AuditLog     *hcl.Attribute `hcl:"audit_log,optional"`
	Audit        []rawBlock     `hcl:"audit,block"`
	Approval     []rawBlock     `hcl:"approval,block"`
	Exposure     []rawBlock     `hcl:"exposure,block"`
	Model        []rawBlock     `hcl:"model,block"`
	Serve        []rawBlock     `hcl:"serve,block"`
	Plugins      []rawNamed     `hcl:"plugin,block"`
	Environments []rawNamed     `hcl:"environment,block"`
	Servers      []rawNamed     `hcl:"server,block"`
}

type rawBlock struct {
	Body      hcl.Body  `hcl:",remain"`
	DeclRange hcl.Range `hcl:",def_range"`
}

type rawNamed struct {
	Name      string    `hcl:"name,label"`
	NameRange hcl.Range `hcl:"name,label_range"`
	Body      hcl.Body  `hcl:",remain"`
	DeclRange hcl.Range `hcl:",def_range"`
}

// loader merges the files of one Load.
type loader struct {
	cfg       *Config
	lookupEnv func(string) (string, bool)

	// first definitions, for duplicate errors that point at both
	singletons map[string]hcl.Range
	plugins    map[string]hcl.Range
	envs       map[string]hcl.Range
	servers    map[string]hcl.Range

	// references checked once every file is read, since a reference may
	// name a block in another file
	reviewerAttr  *hcl.Attribute
	auditOnError  *hcl.Attribute // audit { on_error }, checked against the path
	approvalRange hcl.Range
	guardianAttr  *hcl.Attribute
	launcherRefs  []launcherRef
	serverRefs    []serverRef
}

type launcherRef struct {
	env  string
	attr *hcl.Attribute
}

type serverRef struct {
	server     string
	envAttr    *hcl.Attribute // nil = default environment
	remoteVars []remoteVar
}

type remoteVar struct {
	name  string
	rng   hcl.Range
	shown bool // written literally, so the name may be printed
}

func (l *loader) file(d *decoder, f *hcl.File) {
	var top rawTop
	decodeBlock(d, f.Body, &top)

	if top.AuditLog != nil && l.singleton(d, "audit_log", "audit log path (audit_log or audit { path })", top.AuditLog.Range) {
		if p, ok := d.path(top.AuditLog); ok {
			l.cfg.AuditLog = p
		}
	}
	for _, b := range top.Audit {
		var r rawAudit
		if l.singleton(d, "audit", "audit block", b.DeclRange) && decodeBlock(d, b.Body, &r) {
			r.DeclRange = b.DeclRange
			l.audit(d, &r)
		}
	}
	for _, b := range top.Approval {
		var r rawApproval
		if l.singleton(d, "approval", "approval block", b.DeclRange) && decodeBlock(d, b.Body, &r) {
			r.DeclRange = b.DeclRange
			l.approval(d, &r)
		}
	}
	for _, b := range top.Exposure {
		var r rawExposure
		if l.singleton(d, "exposure", "exposure block", b.DeclRange) && decodeBlock(d, b.Body, &r) {
			l.exposure(d, &r)
		}
	}
	for _, b := range top.Model {
		var r rawModel
		if l.singleton(d, "model", "model block", b.DeclRange) && decodeBlock(d, b.Body, &r) {
			l.model(d, &r)
		}
	}
	for _, b := range top.Serve {
		var r rawServe
		if l.singleton(d, "serve", "serve block", b.DeclRange) && decodeBlock(d, b.Body, &r) {
			r.DeclRange = b.DeclRange
			l.serve(d, &r)
		}
	}
	for _, b := range top.Plugins {
		var r rawPlugin
		if l.named(d, "plugin", b, l.plugins) && decodeBlock(d, b.Body, &r) {
			r.Name, r.NameRange, r.DeclRange = b.Name, b.NameRange, b.DeclRange
			l.plugin(d, &r, f)
		}
	}
	for _, b := range top.Environments {
		var r rawEnvironment
		if l.named(d, "environment", b, l.envs) && decodeBlock(d, b.Body, &r) {
			r.Name, r.NameRange, r.DeclRange = b.Name, b.NameRange, b.DeclRange
			l.environment(d, &r, f)
		}
	}
	for _, b := range top.Servers {
		var r rawServer
		if l.named(d, "server", b, l.servers) && decodeBlock(d, b.Body, &r) {
			r.Name, r.NameRange, r.DeclRange = b.Name, b.NameRange, b.DeclRange
			l.server(d, &r)
		}
	}
}

// decodeBlock applies the strict schema of target to body and reports
// whether it held.
func decodeBlock(d *decoder, body hcl.Body, target any) bool {
	diags := gohcl.DecodeBody(body, nil, target)
	schema, _ := gohcl.ImpliedBodySchema(target)
	betterSuggestions(diags, schema)
	d.diags = append(d.diags, diags...)
	return !diags.HasErrors()
}

var (
	suggestionRe = regexp.MustCompile(` Did you mean "([^"]+)"\?$`)
	unexpectedRe = regexp.MustCompile(`^(?:An argument named|Blocks of type) "([^"]+)"`)
)

// betterSuggestions fixes HCL's "Did you mean" hints, which take the first
// name in alphabetical order within distance 2: "servers" gets "serve"
// rather than "server". The closest name wins here; HCL's text is kept
// otherwise.
func betterSuggestions(diags hcl.Diagnostics, schema *hcl.BodySchema) {
	for _, diag := range diags {
		var names []string
		switch diag.Summary {
		case "Unsupported argument":
			for _, a := range schema.Attributes {
				names = append(names, a.Name)
			}
		case "Unsupported block type":
			for _, b := range schema.Blocks {
				names = append(names, b.Type)
			}
		default:
			continue
		}
		got := unexpectedRe.FindStringSubmatch(diag.Detail)
		hint := suggestionRe.FindStringSubmatchIndex(diag.Detail)
		if got == nil || hint == nil {
			continue
		}
		old := diag.Detail[hint[2]:hint[3]]
		if better := suggest(got[1], names); better != "" && levenshtein(got[1], better) < levenshtein(got[1], old) {
			diag.Detail = diag.Detail[:hint[2]] + better + diag.Detail[hint[3]:]
		}
	}
}

// singleton records the first definition of key and reports a second one.
func (l *loader) singleton(d *decoder, key, what string, rng hcl.Range) bool {
	if first, ok := l.singletons[key]; ok {
		d.errorf(rng, "Duplicate "+what,
			"Only one %s is allowed across all config files; the first was defined at %s. Merge the two into one.",
			what, first)
		return false
	}
	l.singletons[key] = rng
	return true
}

// named checks a labelled block's name: the pattern, then uniqueness.
func (l *loader) named(d *decoder, kind string, b rawNamed, seen map[string]hcl.Range) bool {
	if !namePattern.MatchString(b.Name) {
		what := kind
		if kind == "server" {
			what = "MCP server"
		}
		d.errorf(b.NameRange, fmt.Sprintf("Invalid %s name", kind),
			"Invalid %s name '%s': must match pattern %s. Rename the block using only letters, digits, _ and -.",
			what, b.Name, namePattern)
		return false
	}
	if first, ok := seen[b.Name]; ok {
		d.errorf(b.DeclRange, fmt.Sprintf("Duplicate %s %q", kind, b.Name),
			"A %s named %q was already defined at %s. Names must be unique across all config files; rename or remove one of them.",
			kind, b.Name, first)
		return false
	}
	seen[b.Name] = b.DeclRange
	return true
}
