package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/zclconf/go-cty/cty"
)

// fakeEnv is a LookupEnv over a fixed map.
func fakeEnv(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

// writeFiles writes name → content into a fresh directory and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// loadString loads src as dir/toolgate.hcl.
func loadString(t *testing.T, src string, env map[string]string) (*Config, hcl.Diagnostics, string) {
	t.Helper()
	dir := writeFiles(t, map[string]string{"toolgate.hcl": src})
	cfg, diags := Load(filepath.Join(dir, "toolgate.hcl"), LoadOptions{LookupEnv: fakeEnv(env)})
	return cfg, diags, dir
}

func mustLoad(t *testing.T, src string, env map[string]string) (*Config, string) {
	t.Helper()
	cfg, diags, dir := loadString(t, src, env)
	if diags.HasErrors() {
		t.Fatalf("Load: %s", diags.Error())
	}
	return cfg, dir
}

// ignoreRanges drops source ranges and parsed files from comparisons.
var ignoreRanges = cmp.Options{
	cmpopts.IgnoreTypes(hcl.Range{}),
	cmpopts.IgnoreFields(Config{}, "Files"),
	cmpopts.EquateEmpty(),
}

func TestLoadDefaults(t *testing.T) {
	t.Parallel()
	cfg, dir := mustLoad(t, `server "demo" {
  command = "mcp-demo"
}
`, nil)
	want := &Config{
		Paths:        []string{filepath.Join(dir, "toolgate.hcl")},
		Dir:          dir,
		AuditOnError: AuditOnErrorLog,
		Approval: Approval{
			Policy: PolicyOnRequest, Permissions: PermWorkspaceWrite, Reviewer: ReviewerUser,
		},
		Exposure: Exposure{Mode: ExposureAuto, NameLimit: 64, DeferCount: 50, DeferBytes: 64000},
		Model:    Model{OutputBudgetBytes: 12000},
		Serve:    Serve{Listen: "127.0.0.1:8931", MaxResultBytes: DefaultMaxResultBytes, MaxSessions: DefaultMaxSessions, InitialListWait: DefaultInitialListWait, Ops: ServeOps{DrainGrace: DefaultDrainGrace}},
		Servers: []Server{{
			Name:           "demo",
			Transport:      TransportStdio,
			Command:        "mcp-demo",
			Enabled:        true,
			StartupTimeout: 30 * time.Second, RetryStartup: true,
			ToolTimeout:     300 * time.Second,
			ProtocolVersion: "auto",
			Environment:     "local",
			Prefix:          true,
			RedactResults:   true,
			ForwardSampling: ptr(false),
		}},
	}
	if diff := cmp.Diff(want, cfg, ignoreRanges); diff != "" {
		t.Errorf("Load (-want +got):\n%s", diff)
	}
	if got := cfg.Servers[0].DeclRange.Start.Line; got != 1 {
		t.Errorf("DeclRange line = %d, want 1", got)
	}
	if _, ok := cfg.Files[filepath.Join(dir, "toolgate.hcl")]; !ok {
		t.Errorf("Files lacks the loaded file: %v", cfg.Files)
	}
}

func TestLoadFullConfig(t *testing.T) {
	t.Parallel()
	src := `audit_log = "logs/audit.jsonl"

approval {
  policy      = "untrusted"
  permissions = "read-only"
  reviewer    = "guardian"
  guardian    = "judge"
}

exposure {
  mode            = "deferred"
  name_limit      = 128
  defer_threshold = { tools = 10 }
  never_defer     = ["mcp__files__*"]
  embeddings {
    url             = "http://localhost:11434/v1"
    model           = "nomic-embed-text"
    api_key_env_var = "EMBEDDINGS_KEY"
  }
}

model {
  image_input         = true
  audio_input         = true
  output_budget_bytes = 5000
}

serve {
  listen                    = "0.0.0.0:9000"
  token_env_var             = "TOOLGATE_TOKEN"
  max_result_bytes          = 1048576
  max_sessions              = 50
  allow_persistent_approval = true
  forward_sampling          = true
  drain_grace               = "45s"
  initial_list_wait         = "2s"
  metrics {
    listen = "0.0.0.0:9464"
  }
  tracing {
    otlp_endpoint = "http://collector:4318"
  }
}

plugin "policy" {
  kind     = "hook"
  path     = "bin/plugins/toolgate-hook-policy"
  sha256   = "ABCDEF0123456789abcdef0123456789ABCDEF0123456789abcdef0123456789"
  timeout  = "2s"
  on_error = "skip"
  events   = ["PreToolUse", "PermissionRequest"]
  match {
    server = "files"
    tool   = "write_*"
  }
  match {
    regex = "^mcp__github__"
  }
  config {
    rules = ["deny delete_*"]
  }
}

plugin "judge" {
  kind    = "guardian"
  path    = "/opt/toolgate/guardian"
  timeout = 1.5
}

plugin "exec" {
  kind = "launcher"
  path = "bin/plugins/launcher-exec"
}

environment "buildbox" {
  launcher = "exec"
  cwd      = "work"
  config {
    executor = "ssh"
    host     = "build-1"
  }
}

server "github" {
  url                  = "https://example.invalid/mcp"
  bearer_token_env_var = "GITHUB_TOKEN"
  http_headers         = { "X-Client" = "toolgate" }
  env_http_headers     = { "X-Api-Key" = "GITHUB_API_KEY" }
  required             = true
  startup_timeout_sec  = 12.5
  tool_timeout_sec     = 60
  protocol_version     = "2025-06-18"
  exposure             = "direct"
  oauth {
    client_id             = "toolgate"
    client_secret_env_var = "GITHUB_CLIENT_SECRET"
    scopes                = ["repo", "read:org"]
    callback_port         = 8765
    resource              = "https://example.invalid/"
    grant                 = "client_credentials"
    private_key_file      = "keys/client.pem"
  }
}

server "files" {
  command     = "bin/mcp-demo"
  args        = ["--root", "."]
  env         = { DEMO_MODE = "1" }
  env_vars    = ["PROJECT_ROOT", { name = "REMOTE_HOME", source = "remote" }, { name = "LANG" }]
  cwd         = "project"
  environment = "buildbox"
  enabled_tools  = []
  disabled_tools = ["delete_everything"]
  default_tools_approval_mode = "writes"
  tool "write_file" { approval_mode = "prompt" }
  tool "read_file" {
    approval_mode = "approve"
  }
  prefix  = false
  enabled = false
  supports_parallel_tool_calls = true
  forward_sampling             = false
  redact_results = false
  redact_secret_formats = true
  max_description_bytes = 2048
  max_schema_bytes      = 100000
}
`
	cfg, dir := mustLoad(t, src, map[string]string{"GITHUB_TOKEN": "t0ken"})
	want := &Config{
		Paths:        []string{filepath.Join(dir, "toolgate.hcl")},
		Dir:          dir,
		AuditLog:     filepath.Join(dir, "logs/audit.jsonl"),
		AuditOnError: AuditOnErrorLog,
		Approval:     Approval{Policy: PolicyUntrusted, Permissions: PermReadOnly, Reviewer: ReviewerGuardian, Guardian: "judge"},
		Exposure: Exposure{Mode: ExposureDeferred, NameLimit: 128, DeferCount: 10, DeferBytes: 64000, NeverDefer: []string{"mcp__files__*"},
			Embeddings: &Embeddings{URL: "http://localhost:11434/v1", Model: "nomic-embed-text", APIKeyEnvVar: "EMBEDDINGS_KEY"}},
		Model: Model{ImageInput: true, AudioInput: true, OutputBudgetBytes: 5000},
		Serve: Serve{Listen: "0.0.0.0:9000", TokenEnvVar: "TOOLGATE_TOKEN", MaxResultBytes: 1 << 20, MaxSessions: 50, AllowPersistentApproval: true, ForwardSampling: true, InitialListWait: 2 * time.Second,
			Ops: ServeOps{MetricsListen: "0.0.0.0:9464", OTLPEndpoint: "http://collector:4318", DrainGrace: 45 * time.Second}},
		Plugins: []Plugin{
			{
				Name: "policy", Kind: KindHook, Path: filepath.Join(dir, "bin/plugins/toolgate-hook-policy"),
				SHA256:  "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789",
				Timeout: 2 * time.Second, OnError: OnErrorSkip,
				Events: []string{"PreToolUse", "PermissionRequest"},
				Match:  []HookMatch{{Server: "files", Tool: "write_*"}, {Regex: "^mcp__github__"}},
			},
			{Name: "judge", Kind: KindGuardian, Path: "/opt/toolgate/guardian", Timeout: 1500 * time.Millisecond, OnError: OnErrorDeny},
			{Name: "exec", Kind: KindLauncher, Path: filepath.Join(dir, "bin/plugins/launcher-exec"), Timeout: 10 * time.Second, OnError: OnErrorDeny},
		},
		Environments: []Environment{{Name: "buildbox", Launcher: "exec", Cwd: filepath.Join(dir, "work")}},
		Servers: []Server{
			{
				Name: "github", Transport: TransportHTTP,
				URL: "https://example.invalid/mcp", BearerTokenEnvVar: "GITHUB_TOKEN",
				HTTPHeaders:    map[string]string{"X-Client": "toolgate"},
				EnvHTTPHeaders: map[string]string{"X-Api-Key": "GITHUB_API_KEY"},
				OAuth: &OAuth{
					ClientID: "toolgate", ClientSecretEnvVar: "GITHUB_CLIENT_SECRET", Scopes: []string{"repo", "read:org"},
					CallbackPort: 8765, Resource: "https://example.invalid/", Grant: "client_credentials",
					PrivateKeyFile: filepath.Join(dir, "keys/client.pem"),
				},
				Enabled: true, Required: true,
				StartupTimeout: 12500 * time.Millisecond, RetryStartup: true, ToolTimeout: 60 * time.Second,
				ProtocolVersion: "2025-06-18", Environment: "local", Prefix: true, Exposure: ExposureDirect,
				RedactResults: true, ForwardSampling: ptr(true), // serve's
			},
			{
				Name: "files", Transport: TransportStdio,
				Command: filepath.Join(dir, "bin/mcp-demo"),
				Args:    []string{"--root", "."},
				Env:     map[string]string{"DEMO_MODE": "1"},
				EnvVars: []EnvVar{
					{Name: "PROJECT_ROOT", Source: EnvSourceLocal},
					{Name: "REMOTE_HOME", Source: EnvSourceRemote},
					{Name: "LANG", Source: EnvSourceLocal},
				},
				Cwd:            filepath.Join(dir, "project"),
				StartupTimeout: 30 * time.Second, RetryStartup: true,
				RedactSecretFormats: true, MaxDescriptionBytes: 2048, MaxSchemaBytes: 100000,
				ToolTimeout:              300 * time.Second,
				EnabledTools:             []string{},
				DisabledTools:            []string{"delete_everything"},
				ProtocolVersion:          "auto",
				Environment:              "buildbox",
				DefaultToolsApprovalMode: ModeWrites,
				Tools: map[string]ToolConfig{
					"write_file": {ApprovalMode: ModePrompt},
					"read_file":  {ApprovalMode: ModeApprove},
				},
				ParallelToolCalls: true,
				ForwardSampling:   ptr(false), // its own block's
			},
		},
	}
	opts := append(ignoreRanges, cmpopts.IgnoreFields(Plugin{}, "Config"), cmpopts.IgnoreFields(Environment{}, "Config"))
	if diff := cmp.Diff(want, cfg, opts); diff != "" {
		t.Errorf("Load (-want +got):\n%s", diff)
	}
	// enabled_tools = [] means "no tool", which must stay distinct from unset.
	if s, _ := cfg.Server("files"); s.EnabledTools == nil {
		t.Error("enabled_tools = [] decoded as nil (unset); want an empty, non-nil list")
	}
	if s, _ := cfg.Server("github"); s.EnabledTools != nil {
		t.Errorf("unset enabled_tools = %#v, want nil", s.EnabledTools)
	}

	// The plugin-owned config body is kept undecoded and decodes later
	// with the plugin's schema.
	p, _ := cfg.Plugin("policy")
	val, diags := DecodeConfigBody(p.Config, &hcldec.ObjectSpec{
		"rules": &hcldec.AttrSpec{Name: "rules", Type: cty.List(cty.String), Required: true},
	})
	if diags.HasErrors() {
		t.Fatalf("DecodeConfigBody: %s", diags.Error())
	}
	if got := val.GetAttr("rules").Index(cty.NumberIntVal(0)).AsString(); got != "deny delete_*" {
		t.Errorf("rules[0] = %q", got)
	}
	e, _ := cfg.Environment("buildbox")
	_, diags = DecodeConfigBody(e.Config, &hcldec.ObjectSpec{
		"executor": &hcldec.AttrSpec{Name: "executor", Type: cty.String},
	})
	// The diagnostic points at host's line in the file, wherever the
	// blocks above it put it.
	hostLine := 1 + strings.Count(src[:strings.Index(src, `host     = "build-1"`)], "\n")
	if len(diags) != 1 || !strings.Contains(diags[0].Detail, `"host" is not expected here`) || diags[0].Subject.Start.Line != hostLine {
		t.Errorf("decoding with a schema lacking host: want one Unsupported argument at line %d, got %v", hostLine, diags)
	}
}

func TestLoadFunctions(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{
		"conf/toolgate.hcl": `server "s" {
  command = env("DEMO_CMD")
  args    = [env("MISSING", "fallback"), trimspace(file("secrets/arg.txt")), upper("x"), lower("Y"),
             join(",", ["a", "b"]), format("%s-%d", "n", 3), coalesce(null, "c")]
  env     = { E = env("EMPTY", "unused") }
}
`,
		"conf/secrets/arg.txt": "  from-file\n",
	})
	cfg, diags := Load(filepath.Join(dir, "conf"), LoadOptions{LookupEnv: fakeEnv(map[string]string{
		"DEMO_CMD": "mcp-demo",
		"EMPTY":    "",
	})})
	if diags.HasErrors() {
		t.Fatalf("Load: %s", diags.Error())
	}
	s := cfg.Servers[0]
	if s.Command != "mcp-demo" {
		t.Errorf("Command = %q, want env value", s.Command)
	}
	want := []string{"fallback", "from-file", "X", "y", "a,b", "n-3", "c"}
	if diff := cmp.Diff(want, s.Args); diff != "" {
		t.Errorf("Args (-want +got):\n%s", diff)
	}
	// A set but empty variable is set: the default does not apply.
	if got, ok := s.Env["E"]; !ok || got != "" {
		t.Errorf(`env("EMPTY", "unused") = %q, want "" (the variable is set)`, got)
	}
}

func TestLoadDirectoryMerges(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{
		"10-base.hcl": `approval {
  policy = "never"
}
server "b" {
  command = "bin/b"
}
`,
		"20-more.hcl": `plugin "exec" {
  kind = "launcher"
  path = "launcher"
}
server "a" {
  command = "./a"
}
`,
		"sub/20-more.hcl":     `server "ignored" { command = "x" }`,
		".#20-more.hcl":       `not hcl at all {`,
		"notes.txt":           `not hcl at all {`,
		"config.hcl.example":  `server "ignored" { command = "x" }`,
		"sub/nested/zzz.hcl":  `server "ignored" { command = "x" }`,
		"30-env/placeholder":  ``,
		"40-empty-dir.hcl/.k": ``,
	})
	cfg, diags := Load(dir, LoadOptions{LookupEnv: fakeEnv(nil)})
	if diags.HasErrors() {
		t.Fatalf("Load: %s", diags.Error())
	}
	wantPaths := []string{filepath.Join(dir, "10-base.hcl"), filepath.Join(dir, "20-more.hcl")}
	if diff := cmp.Diff(wantPaths, cfg.Paths); diff != "" {
		t.Errorf("Paths (-want +got):\n%s", diff)
	}
	if cfg.Dir != dir {
		t.Errorf("Dir = %q, want %q", cfg.Dir, dir)
	}
	var names []string
	for _, s := range cfg.Servers {
		names = append(names, s.Name+"="+s.Command)
	}
	if diff := cmp.Diff([]string{"b=" + filepath.Join(dir, "bin/b"), "a=" + filepath.Join(dir, "a")}, names); diff != "" {
		t.Errorf("servers in file order (-want +got):\n%s", diff)
	}
	if cfg.Approval.Policy != PolicyNever {
		t.Errorf("policy = %q from 10-base.hcl, want never", cfg.Approval.Policy)
	}
	if len(cfg.Plugins) != 1 || cfg.Plugins[0].Path != filepath.Join(dir, "launcher") {
		t.Errorf("Plugins = %+v", cfg.Plugins)
	}
	if len(cfg.Files) != 2 {
		t.Errorf("Files has %d entries, want 2", len(cfg.Files))
	}
}

// Relative paths resolve against the directory of the file that wrote
// them, whatever directory the config was loaded from.
func TestLoadResolvesPathsPerFile(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{
		"a/toolgate.hcl": `server "s" {
  command = "bin/mcp-demo"
  cwd     = "../work"
}
audit_log = "audit.jsonl"
`,
	})
	cfg, diags := Load(filepath.Join(dir, "a", "toolgate.hcl"), LoadOptions{LookupEnv: fakeEnv(nil)})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	s := cfg.Servers[0]
	if want := filepath.Join(dir, "a", "bin", "mcp-demo"); s.Command != want {
		t.Errorf("Command = %q, want %q", s.Command, want)
	}
	if want := filepath.Join(dir, "work"); s.Cwd != want {
		t.Errorf("Cwd = %q, want %q", s.Cwd, want)
	}
	if want := filepath.Join(dir, "a", "audit.jsonl"); cfg.AuditLog != want {
		t.Errorf("AuditLog = %q, want %q", cfg.AuditLog, want)
	}
}

func TestLoadMissingPath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name, path, want string
	}{
		{"missing file", filepath.Join(dir, "nope.hcl"), "copy config.hcl.example"},
		{"empty directory", dir, "holds no *.hcl files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, diags := Load(tc.path, LoadOptions{})
			if !diags.HasErrors() || !strings.Contains(diags.Error(), tc.want) {
				t.Fatalf("diags = %v, want an error containing %q", diags, tc.want)
			}
			if cfg == nil {
				t.Fatal("Load returned a nil Config; callers need Files to render diagnostics")
			}
		})
	}
}

func TestExampleConfigLoads(t *testing.T) {
	t.Parallel()
	cfg, diags := Load(filepath.Join("..", "..", "config.hcl.example"), LoadOptions{LookupEnv: fakeEnv(nil)})
	for _, d := range diags {
		t.Errorf("config.hcl.example: %s", d.Error())
	}
	if !diags.HasErrors() && len(cfg.Servers) == 0 {
		t.Error("config.hcl.example defines no server")
	}
}

// BenchmarkLoad measures a config of realistic size: 50 servers with
// tool blocks, a few plugins. Reload runs this on every config change.
func BenchmarkLoad(b *testing.B) {
	var src strings.Builder
	src.WriteString(hookPlugin)
	for i := range 50 {
		fmt.Fprintf(&src, `server "s%d" {
  command  = "bin/mcp-%d"
  args     = ["--root", ".", "--verbose"]
  env_vars = ["HOME", { name = "TOKEN_%d", source = "local" }]
  default_tools_approval_mode = "writes"
  tool "write_file" { approval_mode = "prompt" }
  tool "read_file" { approval_mode = "approve" }
}
`, i, i, i)
	}
	dir := b.TempDir()
	p := filepath.Join(dir, "toolgate.hcl")
	if err := os.WriteFile(p, []byte(src.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	opts := LoadOptions{LookupEnv: fakeEnv(nil)}
	b.ReportAllocs()
	for b.Loop() {
		if _, diags := Load(p, opts); diags.HasErrors() {
			b.Fatal(diags.Error())
		}
	}
}

func BenchmarkRememberToolApproval(b *testing.B) {
	src, err := os.ReadFile(filepath.Join("testdata", "remember.hcl"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := setToolApproval(src, "remember.hcl", "files", "delete_file", ""); err != nil {
			b.Fatal(err)
		}
	}
}

// A Windows absolute command is kept as written on every OS, so the
// launcher can say it names a Windows program instead of reporting a
// strange path under the config's directory.
func TestWindowsCommandPathIsKeptAsWritten(t *testing.T) {
	for _, command := range []string{`C:\\tools\\srv.exe`, `D:/srv/run.cmd`, `\\\\host\\share\\srv.exe`} {
		cfg, _ := mustLoad(t, "server \"s\" {\n  command = \""+command+"\"\n}\n", nil)
		want := strings.ReplaceAll(command, `\\`, `\`)
		if got := cfg.Servers[0].Command; got != want {
			t.Errorf("command %s loaded as %q, want %q", command, got, want)
		}
	}
}

// initial_list_wait = 0 turns the wait off, unlike the other durations
// where 0 is refused; unset it is the default.
func TestInitialListWaitZeroAnswersAtOnce(t *testing.T) {
	for src, want := range map[string]time.Duration{
		"serve {\n  initial_list_wait = 0\n}\n":      0,
		"serve {\n  initial_list_wait = \"0s\"\n}\n": 0,
		"serve {\n  initial_list_wait = 1.5\n}\n":    1500 * time.Millisecond,
		"serve {\n  max_sessions = 3\n}\n":           DefaultInitialListWait,
	} {
		cfg, _ := mustLoad(t, src, nil)
		if got := cfg.Serve.InitialListWait; got != want {
			t.Errorf("%q: InitialListWait = %v, want %v", src, got, want)
		}
	}
}
func ptr[T any](v T) *T { return &v }
