package config

import (
	"time"

	"github.com/hashicorp/hcl/v2"
)

// Config is the validated, defaulted projection of one or more HCL files.
// Every consumer reads this; nobody outside this package reads HCL.
//
// A Config is immutable once returned by [Load]: consumers must not modify
// it, and the reload path compares two Configs to decide what to restart.
type Config struct {
	// Paths are the files that were read, in load order.
	Paths []string
	// Dir is the directory relative paths are resolved against (the
	// directory of the first file).
	Dir string

	AuditLog string // absolute path, "" = no audit log (audit_log, or audit { path })
	// AuditOnError says what a failing audit log means for calls
	// (audit { on_error }); default AuditOnErrorLog.
	AuditOnError AuditOnError
	// AuditRotate and AuditSigning are audit { rotate {} } and audit {
	// signing {} }: when the ledger starts a new file, and the key its
	// checkpoints are signed with.
	AuditRotate  AuditRotate
	AuditSigning AuditSigning

	Approval Approval
	Exposure Exposure
	Model    Model
	Serve    Serve

	Plugins      []Plugin      // in config order
	Environments []Environment // in config order; "local" is implicit
	Servers      []Server      // in config order

	// Files holds the parsed sources, for diagnostics rendering.
	Files map[string]*hcl.File
}

// Server returns the server block with the given name.
func (c *Config) Server(name string) (Server, bool) {
	for _, s := range c.Servers {
		if s.Name == name {
			return s, true
		}
	}
	return Server{}, false
}

// Plugin returns the plugin block with the given name.
func (c *Config) Plugin(name string) (Plugin, bool) {
	for _, p := range c.Plugins {
		if p.Name == name {
			return p, true
		}
	}
	return Plugin{}, false
}

// Environment returns the environment block with the given name. The
// built-in "local" environment is returned when no block overrides it.
func (c *Config) Environment(name string) (Environment, bool) {
	for _, e := range c.Environments {
		if e.Name == name {
			return e, true
		}
	}
	if name == LocalEnvironment {
		return Environment{Name: LocalEnvironment, Launcher: LocalLauncher}, true
	}
	return Environment{}, false
}

// Policy is the approval policy: when may the host ask a human.
type Policy string

const (
	PolicyUntrusted Policy = "untrusted"
	PolicyOnRequest Policy = "on-request"
	PolicyNever     Policy = "never"
)

// Permissions is the sandbox permission profile the host runs under.
type Permissions string

const (
	PermReadOnly       Permissions = "read-only"
	PermWorkspaceWrite Permissions = "workspace-write"
	PermFullAccess     Permissions = "full-access"
)

// Reviewer says who answers the user path of the approval procedure.
type Reviewer string

const (
	ReviewerUser     Reviewer = "user"
	ReviewerGuardian Reviewer = "guardian"
)

// Approval is the top-level approval block.
type Approval struct {
	Policy      Policy      // default on-request
	Permissions Permissions // default workspace-write
	Reviewer    Reviewer    // default user
	// Guardian names the plugin block of kind guardian used when Reviewer
	// is guardian. Empty means "the only guardian plugin configured".
	Guardian string
	// Inbox holds calls for a human to answer from a browser, the
	// terminal or a chat message when the upstream client of toolgate
	// serve cannot be asked (package inbox). nil = no inbox.
	Inbox *Inbox
}

// InboxMode is how a call waits for its held approval.
type InboxMode string

const (
	// InboxHold keeps the MCP call open (with progress notifications)
	// until the approval is answered or times out.
	InboxHold InboxMode = "hold"
	// InboxRetry answers at once with a tool error naming the pending
	// approval; the same call made again after approval runs.
	InboxRetry InboxMode = "retry"
)

// Inbox routes: where the user step of approval goes.
const (
	RouteInbox  = "inbox"
	RouteClient = "client"
)

// Defaults of the inbox block.
const (
	DefaultInboxTimeout = 10 * time.Minute
	DefaultInboxExpiry  = time.Hour
)

// Inbox is approval { inbox { ... } }.
type Inbox struct {
	// Mode is the default way to hold (hold unless set).
	Mode InboxMode
	// Timeout is how long a held call waits (hold mode) before it is
	// denied; DefaultInboxTimeout unless set.
	Timeout time.Duration
	// Expiry is how long a pending or approved-but-unused approval lives
	// (retry mode); DefaultInboxExpiry unless set.
	Expiry time.Duration
	// URL is the base URL approvers reach serve at, for the links in
	// denial texts and notifications; "" = serve's own listen URL.
	URL string
	// Approvers, when set, are the only identities that may answer:
	// "sub:<subject>", "group:<group>" or "email:<address>" of the OAuth
	// caller (serve { auth }). Empty = whoever authenticates as the
	// gateway does (its static token, or loopback without one).
	Approvers []string
	// SeparateApprover forbids answering one's own call (four-eyes).
	SeparateApprover bool
	// Routes choose, per server, tool or caller, whether the human is
	// asked through the inbox even when the client could be asked, and
	// the mode. First match wins.
	Routes []InboxRoute
	// Notify posts each new pending approval to a webhook; nil = none.
	Notify *InboxNotify
}

// InboxRoute is one route { } block of the inbox. Empty lists match
// everything; a call matches when every non-empty list has it.
type InboxRoute struct {
	Servers []string
	// Tools are raw tool names, or "server/tool".
	Tools []string
	// Callers are "sub:…", "group:…" or "email:…".
	Callers []string
	// To is RouteInbox (always hold in the inbox) or RouteClient (ask the
	// client when it can; the default).
	To string
	// Mode overrides the inbox's mode for matching calls; "" = inherit.
	Mode InboxMode
}

// InboxNotify is the inbox's webhook.
type InboxNotify struct {
	URL string
	// Headers are sent with each post (e.g. Authorization); their values
	// are secrets and never logged.
	Headers map[string]string
}

// ApprovalMode is a per-server or per-tool approval mode.
type ApprovalMode string

const (
	ModeAuto    ApprovalMode = "auto"
	ModePrompt  ApprovalMode = "prompt"
	ModeWrites  ApprovalMode = "writes"
	ModeApprove ApprovalMode = "approve"
	// ModeRemembered is what "Allow and don't ask me again" writes: the
	// user's answer is remembered, so they are not asked again, but
	// permission hooks and the Guardian still decide first (a deny from
	// them wins). ModeApprove, written by the operator, skips them too.
	ModeRemembered ApprovalMode = "remembered"
)

// ExposureMode decides which tools the model sees directly.
type ExposureMode string

const (
	ExposureDirect   ExposureMode = "direct"
	ExposureDeferred ExposureMode = "deferred"
	ExposureAuto     ExposureMode = "auto"
)

// Exposure is the top-level exposure block.
type Exposure struct {
	Mode      ExposureMode // default auto
	NameLimit int          // bytes of the flat model name; default 64, 1..128
	// DeferCount and DeferBytes are the auto-mode thresholds: the direct
	// list is deferred when it would hold more than DeferCount tools or
	// more than DeferBytes bytes of specs.
	DeferCount int
	DeferBytes int
	NeverDefer []string // model-name globs (internal/glob) pinned to the direct list
	// Embeddings turns on tool_search's semantic ranking; nil = BM25 alone.
	Embeddings *Embeddings
}

// Embeddings is the exposure { embeddings { … } } block: an
// OpenAI-compatible embeddings endpoint for tool_search.
type Embeddings struct {
	URL          string // base URL (…/v1) or the …/v1/embeddings endpoint
	Model        string
	APIKeyEnvVar string // "" = no Authorization header
}

// Model describes what the consuming model can take.
type Model struct {
	ImageInput        bool
	AudioInput        bool
	OutputBudgetBytes int // default 12000
}

// Serve is the gateway listener block.
type Serve struct {
	Listen      string // default 127.0.0.1:8931
	TokenEnvVar string // env var holding the bearer token; required on every request when set (loopback too), and to bind beyond loopback
	// MaxResultBytes bounds the JSON of one tool result the gateway
	// passes upstream; a larger one is answered with a tool error.
	// Default DefaultMaxResultBytes.
	MaxResultBytes int
	// MaxSessions bounds the upstream HTTP sessions open at once; the
	// excess initialize is answered HTTP 503. Default DefaultMaxSessions.
	MaxSessions int
	// AllowPersistentApproval offers "Allow and don't ask me again" to
	// upstream clients of toolgate serve; default false, because that
	// answer rewrites the operator's config for every session.
	AllowPersistentApproval bool
	// ForwardSampling makes toolgate serve declare the sampling client
	// capability to its servers and forward their sampling/createMessage
	// to the upstream client whose tool call is running; default false
	// (docs/gateway.md, "Sampling"). A server block's forward_sampling overrides it.
	ForwardSampling bool
	// Auth, when set, makes serve accept OAuth access tokens and know
	// each caller; nil = no caller identity (token_env_var at most).
	Auth *Auth
	// Limits are the serve limit blocks, in config order.
	Limits []Limit
	// InitialListWait bounds how long a session's first tools/list (or
	// resources/list, prompts/list) waits for servers still starting, so
	// that a client that lists once sees them; it answers as soon as every
	// enabled server is ready or failed. 0 answers at once with the
	// servers ready. Default DefaultInitialListWait.
	InitialListWait time.Duration
	// Ops is the operations listener and telemetry (serve { metrics },
	// serve { tracing }, drain_grace); see ServeOps.
	Ops ServeOps
}

// ServeOps configures what operators, not MCP clients, talk to.
type ServeOps struct {
	// MetricsListen is where /metrics, /healthz and /readyz are served;
	// "" serves none of them.
	MetricsListen string
	// OTLPEndpoint is the OTLP/HTTP collector URL traces are exported
	// to (such as "http://otel-collector:4318"); "" exports no traces.
	OTLPEndpoint string
	// DrainGrace is how long SIGTERM lets calls in flight finish before
	// they are cancelled; default DefaultDrainGrace.
	DrainGrace time.Duration
}

// PluginKind is the kind of an out-of-process plugin.
type PluginKind string

const (
	KindHook     PluginKind = "hook"
	KindGuardian PluginKind = "guardian"
	KindLauncher PluginKind = "launcher"
)

// AuditRotate says when the audit ledger moves to a new file; zero
// fields never rotate. The rotated file is renamed to
// <name>-<UTC time>.<ext> and the new file continues its hash chain.
type AuditRotate struct {
	MaxBytes int64
	MaxAge   time.Duration
}

// DefaultCheckpointEvery is how many records go between two signed
// checkpoints when audit { signing { checkpoint_every } } is not set.
const DefaultCheckpointEvery = 1000

// AuditSigning is where the Ed25519 key that signs ledger checkpoints
// comes from: a file (KeyFile, absolute) or an environment variable
// (KeyEnv). Both empty = checkpoints are not signed.
type AuditSigning struct {
	KeyFile         string
	KeyEnv          string
	CheckpointEvery int
}

// AuditOnError says what happens to calls while the audit log cannot be
// written.
type AuditOnError string

const (
	// AuditOnErrorLog (the default) logs the first failure, counts the
	// rest, and lets calls run: the audit log never stops work.
	AuditOnErrorLog AuditOnError = "log"
	// AuditOnErrorDeny refuses every call while the last audit write
	// failed, so nothing runs unrecorded.
	AuditOnErrorDeny AuditOnError = "deny"
)

// OnError says what a failing plugin means for a decision.
type OnError string

const (
	OnErrorDeny OnError = "deny"
	OnErrorSkip OnError = "skip"
)

// Plugin is one plugin block.
type Plugin struct {
	Name    string
	Kind    PluginKind
	Path    string // absolute path of the binary
	SHA256  string // lowercase hex, "" = not pinned
	Timeout time.Duration
	OnError OnError
	// Config is the raw plugin-owned config {} body, decoded later by the
	// plugin host with the schema the plugin reports. nil = no block.
	Config hcl.Body
	// Hook-only: Shadow (mode = "shadow") runs the hook beside the
	// enforced chain; its decision is recorded, never applied.
	Shadow bool
	// Hook-only: which tools this hook sees. Empty = all tools.
	Match []HookMatch
	// Hook-only: events this hook receives. Empty = all events.
	Events []string
	// EnvVars names host environment variables passed to the plugin
	// process (e.g. an API key for the Guardian's LLM engine). Nothing else
	// of the host's environment reaches a plugin beyond PATH, HOME, TMPDIR
	// and LANG.
	EnvVars []string

	DeclRange hcl.Range
}

// HookMatch selects tools for a hook. All set fields must match.
type HookMatch struct {
	Server string // glob (internal/glob) over the server name
	Tool   string // glob (internal/glob) over the raw tool name
	Regex  string // regular expression over the flat model name
}

// Built-in environment and launcher names.
const (
	LocalEnvironment = "local"
	LocalLauncher    = "local"
)

// Environment is one environment block: where stdio servers run.
type Environment struct {
	Name     string
	Launcher string // "local" or the name of a plugin of kind launcher
	Cwd      string // fallback working directory for servers
	Config   hcl.Body

	DeclRange hcl.Range
}

// Transport is how the host talks to a server.
type Transport string

const (
	TransportStdio Transport = "stdio"
	TransportHTTP  Transport = "streamable_http"
)

// EnvSource says where an env_vars entry is read.
type EnvSource string

const (
	EnvSourceLocal  EnvSource = "local"  // copied from the host's environment
	EnvSourceRemote EnvSource = "remote" // read on the executor side
)

// EnvVar is one env_vars entry.
type EnvVar struct {
	Name   string
	Source EnvSource
}

// Defaults that more than one package needs to name.
const (
	DefaultStartupTimeout = 30 * time.Second
	DefaultToolTimeout    = 300 * time.Second
	DefaultNameLimit      = 64
	MaxNameLimit          = 128
	DefaultOutputBudget   = 12000
	DefaultListen         = "127.0.0.1:8931"
	// DefaultMaxResultBytes is serve's max_result_bytes: as large as the
	// longest message toolgate reads from a stdio server (go-sdk's line
	// limit), so no result a stdio server can deliver is refused by
	// default, while one from an HTTP server, which has no such limit,
	// cannot make the gateway hold more than a few times 16 MiB. No
	// model's context holds that much text anyway.
	DefaultMaxResultBytes = 16 << 20
	// DefaultMaxSessions is serve's max_sessions: far more than the
	// clients one person runs, few enough that sessions abandoned
	// without DELETE cannot exhaust the gateway before the idle timeout
	// ends them.
	DefaultMaxSessions = 1000
	// ProtocolAuto is the default protocol_version: see mcpclient.
	ProtocolAuto = "auto"
)

// Server is one server block, with defaults applied and paths resolved.
type Server struct {
	Name      string
	Transport Transport

	// stdio
	Command string   // a bare name (PATH lookup at launch) or an absolute path (relative paths are resolved against the file's directory by Load)
	Args    []string //
	Env     map[string]string
	EnvVars []EnvVar
	Cwd     string // absolute, "" = environment fallback

	// streamable_http
	URL               string
	BearerTokenEnvVar string
	HTTPHeaders       map[string]string
	EnvHTTPHeaders    map[string]string // header name → env var name
	OAuth             *OAuth

	Enabled        bool
	Required       bool
	StartupTimeout time.Duration
	// RetryStartup (retry_startup, default true) retries a server whose
	// first start failed with the crash-restart backoff, as if it had
	// crashed; false leaves it failed until a reload.
	RetryStartup  bool
	ToolTimeout   time.Duration
	EnabledTools  []string // raw-name globs (internal/glob); nil = unset (all allowed); empty = nothing allowed
	DisabledTools []string // raw-name globs (internal/glob)
	// EnabledResources / DisabledResources filter resources by URI and
	// resource templates by URI template, like enabled_tools/disabled_tools
	// (nil = unset, empty = nothing allowed; disabled wins).
	EnabledResources  []string
	DisabledResources []string
	// EnabledPrompts / DisabledPrompts filter prompts by their raw names.
	EnabledPrompts  []string
	DisabledPrompts []string
	ProtocolVersion string // ProtocolAuto or an explicit MCP version
	Environment     string // default "local"

	DefaultToolsApprovalMode ApprovalMode // "" = unset (auto)
	Tools                    map[string]ToolConfig
	Prefix                   bool // default true
	// ForwardSampling (forward_sampling) is serve's ForwardSampling
	// unless the server block sets it; the loader fills it in. nil (a
	// Server built by hand) means false.
	ForwardSampling   *bool
	Exposure          ExposureMode // "" = follow the exposure block
	ParallelToolCalls bool         // supports_parallel_tool_calls
	// RedactResults (default true) replaces the secrets the server was
	// given (credential env values, tokens, credential headers) in the
	// results the model gets. The audit log redacts them either way.
	RedactResults bool
	// RedactSecretFormats (default false) also replaces well-known
	// credential formats (AWS keys, GitHub and Slack tokens, JWTs, Bearer
	// values, private key blocks: mcpclient.SecretFormats) in the results
	// the model gets. The audit log and the logs replace them either way.
	RedactSecretFormats bool
	// MaxTools is how many of the server's tools are kept (max_tools); a
	// server listing more is degraded, keeping the first MaxTools. 0 =
	// unset (mcpclient.DefaultMaxTools).
	MaxTools int
	// CallMeta (call_meta, default false) adds the call id and the
	// session id (_meta callId, threadId, as Codex sends them) to every
	// tools/call. Off by default: the server decodes them on every call
	// and few use them. A server that declares a sandbox-state capability
	// gets them either way (execution.Meta).
	CallMeta bool
	// MaxDescriptionBytes and MaxSchemaBytes cap each listed tool's
	// description and each of its schemas (max_description_bytes,
	// max_schema_bytes); past them the description is cut with a marker
	// and the schema replaced, with a warning. 0 = unset (the mcpclient
	// defaults, 8 KiB and 64 KiB).
	MaxDescriptionBytes int
	MaxSchemaBytes      int

	DeclRange hcl.Range
}

// ToolConfig is a tool "<raw name>" block inside a server.
type ToolConfig struct {
	ApprovalMode ApprovalMode
	// ApprovedDefinition binds a remembered approval to the tool's
	// definition ("sha256:<hex>" of name, description, input schema and
	// annotations, see approval.DefinitionHash): when the server changes
	// the tool, the approval no longer applies. "" = not bound.
	ApprovedDefinition string
	DeclRange          hcl.Range
}

// OAuth is the oauth block of an HTTP server.
type OAuth struct {
	ClientID           string
	ClientSecretEnvVar string
	Scopes             []string
	CallbackPort       int
	Resource           string
	// Grant is "authorization_code" (default) or "client_credentials".
	Grant string
	// PrivateKeyFile signs a private_key_jwt client assertion (client_credentials only).
	PrivateKeyFile string
}
