package config

import "github.com/hashicorp/hcl/v2"

// The raw* structs are the HCL schema: gohcl builds a strict body schema
// from their tags, so any argument or block not listed here is reported by
// HCL itself ("Unsupported argument … Did you mean …"). Attributes are kept
// as *hcl.Attribute so that validation knows whether a field was written
// and can point diagnostics at the exact argument; values are evaluated in
// decode.go. Defaults live in defaults.go, never here.

type rawFile struct {
	AuditLog     *hcl.Attribute   `hcl:"audit_log,optional"`
	Audit        *rawAudit        `hcl:"audit,block"`
	Approval     *rawApproval     `hcl:"approval,block"`
	Exposure     *rawExposure     `hcl:"exposure,block"`
	Model        *rawModel        `hcl:"model,block"`
	Serve        *rawServe        `hcl:"serve,block"`
	Plugins      []rawPlugin      `hcl:"plugin,block"`
	Environments []rawEnvironment `hcl:"environment,block"`
	Servers      []rawServer      `hcl:"server,block"`
}

type rawAudit struct {
	Path      *hcl.Attribute `hcl:"path,optional"`
	OnError   *hcl.Attribute `hcl:"on_error,optional"`
	Rotate    *rawRotate     `hcl:"rotate,block"`
	Signing   *rawSigning    `hcl:"signing,block"`
	DeclRange hcl.Range      // set by the loader
}

type rawRotate struct {
	MaxBytes *hcl.Attribute `hcl:"max_bytes,optional"`
	MaxAge   *hcl.Attribute `hcl:"max_age,optional"`
}

type rawSigning struct {
	KeyFile         *hcl.Attribute `hcl:"key_file,optional"`
	KeyEnv          *hcl.Attribute `hcl:"key_env,optional"`
	CheckpointEvery *hcl.Attribute `hcl:"checkpoint_every,optional"`
	DeclRange       hcl.Range      `hcl:",def_range"`
}

type rawApproval struct {
	Policy      *hcl.Attribute `hcl:"policy,optional"`
	Permissions *hcl.Attribute `hcl:"permissions,optional"`
	Reviewer    *hcl.Attribute `hcl:"reviewer,optional"`
	Guardian    *hcl.Attribute `hcl:"guardian,optional"`
	Inbox       *rawInbox      `hcl:"inbox,block"`
	DeclRange   hcl.Range      // set by the loader
}

type rawInbox struct {
	Mode             *hcl.Attribute  `hcl:"mode,optional"`
	Timeout          *hcl.Attribute  `hcl:"timeout,optional"`
	Expiry           *hcl.Attribute  `hcl:"expiry,optional"`
	URL              *hcl.Attribute  `hcl:"url,optional"`
	Approvers        *hcl.Attribute  `hcl:"approvers,optional"`
	SeparateApprover *hcl.Attribute  `hcl:"separate_approver,optional"`
	Routes           []rawInboxRoute `hcl:"route,block"`
	Notify           *rawInboxNotify `hcl:"notify,block"`
	DeclRange        hcl.Range       `hcl:",def_range"`
}

type rawInboxRoute struct {
	Servers   *hcl.Attribute `hcl:"servers,optional"`
	Tools     *hcl.Attribute `hcl:"tools,optional"`
	Callers   *hcl.Attribute `hcl:"callers,optional"`
	To        *hcl.Attribute `hcl:"to,optional"`
	Mode      *hcl.Attribute `hcl:"mode,optional"`
	DeclRange hcl.Range      `hcl:",def_range"`
}

type rawInboxNotify struct {
	URL       *hcl.Attribute `hcl:"url,optional"`
	Headers   *hcl.Attribute `hcl:"headers,optional"`
	DeclRange hcl.Range      `hcl:",def_range"`
}

type rawExposure struct {
	Mode           *hcl.Attribute `hcl:"mode,optional"`
	NameLimit      *hcl.Attribute `hcl:"name_limit,optional"`
	DeferThreshold *hcl.Attribute `hcl:"defer_threshold,optional"`
	NeverDefer     *hcl.Attribute `hcl:"never_defer,optional"`
	Embeddings     *rawEmbeddings `hcl:"embeddings,block"`
	DeclRange      hcl.Range      // set by the loader
}

type rawEmbeddings struct {
	URL          *hcl.Attribute `hcl:"url,optional"`
	Model        *hcl.Attribute `hcl:"model,optional"`
	APIKeyEnvVar *hcl.Attribute `hcl:"api_key_env_var,optional"`
	DeclRange    hcl.Range      `hcl:",def_range"`
}

type rawModel struct {
	ImageInput        *hcl.Attribute `hcl:"image_input,optional"`
	AudioInput        *hcl.Attribute `hcl:"audio_input,optional"`
	OutputBudgetBytes *hcl.Attribute `hcl:"output_budget_bytes,optional"`
	DeclRange         hcl.Range      // set by the loader
}

type rawServe struct {
	Listen         *hcl.Attribute `hcl:"listen,optional"`
	TokenEnvVar    *hcl.Attribute `hcl:"token_env_var,optional"`
	MaxResultBytes *hcl.Attribute `hcl:"max_result_bytes,optional"`
	MaxSessions    *hcl.Attribute `hcl:"max_sessions,optional"`
	// AllowPersistentApproval lets an upstream client's answer write
	// approval_mode = "remembered" into the config.
	AllowPersistentApproval *hcl.Attribute `hcl:"allow_persistent_approval,optional"`
	ForwardSampling         *hcl.Attribute `hcl:"forward_sampling,optional"`
	Auth                    *rawAuth       `hcl:"auth,block"`
	Limits                  []rawLimit     `hcl:"limit,block"`
	DrainGrace              *hcl.Attribute `hcl:"drain_grace,optional"`
	InitialListWait         *hcl.Attribute `hcl:"initial_list_wait,optional"`
	Metrics                 *rawMetrics    `hcl:"metrics,block"`
	Tracing                 *rawTracing    `hcl:"tracing,block"`
	DeclRange               hcl.Range      // set by the loader
}

type rawMetrics struct {
	Listen    *hcl.Attribute `hcl:"listen,optional"`
	DeclRange hcl.Range      `hcl:",def_range"`
}

type rawTracing struct {
	OTLPEndpoint *hcl.Attribute `hcl:"otlp_endpoint,optional"`
	DeclRange    hcl.Range      `hcl:",def_range"`
}

// rawOpaque captures a plugin-owned config {} body undecoded; the plugin
// host decodes it later with the schema the plugin reports.
type rawOpaque struct {
	Body      hcl.Body  `hcl:",remain"`
	DeclRange hcl.Range `hcl:",def_range"`
}

type rawPlugin struct {
	Name      string // label, set by the loader
	NameRange hcl.Range
	Kind      *hcl.Attribute `hcl:"kind,optional"`
	Path      *hcl.Attribute `hcl:"path,optional"`
	SHA256    *hcl.Attribute `hcl:"sha256,optional"`
	Timeout   *hcl.Attribute `hcl:"timeout,optional"`
	OnError   *hcl.Attribute `hcl:"on_error,optional"`
	Mode      *hcl.Attribute `hcl:"mode,optional"`
	Events    *hcl.Attribute `hcl:"events,optional"`
	EnvVars   *hcl.Attribute `hcl:"env_vars,optional"`
	Match     []rawMatch     `hcl:"match,block"`
	Config    *rawOpaque     `hcl:"config,block"`
	DeclRange hcl.Range      // set by the loader
}

type rawMatch struct {
	Server    *hcl.Attribute `hcl:"server,optional"`
	Tool      *hcl.Attribute `hcl:"tool,optional"`
	Regex     *hcl.Attribute `hcl:"regex,optional"`
	DeclRange hcl.Range      `hcl:",def_range"`
}

type rawEnvironment struct {
	Name      string // label, set by the loader
	NameRange hcl.Range
	Launcher  *hcl.Attribute `hcl:"launcher,optional"`
	Cwd       *hcl.Attribute `hcl:"cwd,optional"`
	Config    *rawOpaque     `hcl:"config,block"`
	DeclRange hcl.Range      // set by the loader
}

type rawServer struct {
	Name      string // label, set by the loader
	NameRange hcl.Range

	// stdio
	Command *hcl.Attribute `hcl:"command,optional"`
	Args    *hcl.Attribute `hcl:"args,optional"`
	Env     *hcl.Attribute `hcl:"env,optional"`
	EnvVars *hcl.Attribute `hcl:"env_vars,optional"`
	Cwd     *hcl.Attribute `hcl:"cwd,optional"`

	// streamable_http
	URL               *hcl.Attribute `hcl:"url,optional"`
	BearerToken       *hcl.Attribute `hcl:"bearer_token,optional"` // accepted by the schema only to refuse it with a useful text
	BearerTokenEnvVar *hcl.Attribute `hcl:"bearer_token_env_var,optional"`
	HTTPHeaders       *hcl.Attribute `hcl:"http_headers,optional"`
	EnvHTTPHeaders    *hcl.Attribute `hcl:"env_http_headers,optional"`
	OAuth             *rawOAuth      `hcl:"oauth,block"`

	// both
	Enabled                  *hcl.Attribute `hcl:"enabled,optional"`
	Required                 *hcl.Attribute `hcl:"required,optional"`
	StartupTimeoutSec        *hcl.Attribute `hcl:"startup_timeout_sec,optional"`
	RetryStartup             *hcl.Attribute `hcl:"retry_startup,optional"`
	ToolTimeoutSec           *hcl.Attribute `hcl:"tool_timeout_sec,optional"`
	EnabledTools             *hcl.Attribute `hcl:"enabled_tools,optional"`
	DisabledTools            *hcl.Attribute `hcl:"disabled_tools,optional"`
	EnabledResources         *hcl.Attribute `hcl:"enabled_resources,optional"`
	DisabledResources        *hcl.Attribute `hcl:"disabled_resources,optional"`
	EnabledPrompts           *hcl.Attribute `hcl:"enabled_prompts,optional"`
	DisabledPrompts          *hcl.Attribute `hcl:"disabled_prompts,optional"`
	ProtocolVersion          *hcl.Attribute `hcl:"protocol_version,optional"`
	Environment              *hcl.Attribute `hcl:"environment,optional"`
	DefaultToolsApprovalMode *hcl.Attribute `hcl:"default_tools_approval_mode,optional"`
	Tools                    []rawTool      `hcl:"tool,block"`
	Prefix                   *hcl.Attribute `hcl:"prefix,optional"`
	ForwardSampling          *hcl.Attribute `hcl:"forward_sampling,optional"`
	Exposure                 *hcl.Attribute `hcl:"exposure,optional"`
	ParallelToolCalls        *hcl.Attribute `hcl:"supports_parallel_tool_calls,optional"`
	RedactResults            *hcl.Attribute `hcl:"redact_results,optional"`
	RedactSecretFormats      *hcl.Attribute `hcl:"redact_secret_formats,optional"`
	MaxTools                 *hcl.Attribute `hcl:"max_tools,optional"`
	CallMeta                 *hcl.Attribute `hcl:"call_meta,optional"`
	MaxDescriptionBytes      *hcl.Attribute `hcl:"max_description_bytes,optional"`
	MaxSchemaBytes           *hcl.Attribute `hcl:"max_schema_bytes,optional"`

	DeclRange hcl.Range // set by the loader
}

type rawTool struct {
	Name               string         `hcl:"name,label"`
	ApprovalMode       *hcl.Attribute `hcl:"approval_mode,optional"`
	ApprovedDefinition *hcl.Attribute `hcl:"approved_definition,optional"`
	DeclRange          hcl.Range      `hcl:",def_range"`
}

type rawOAuth struct {
	ClientID           *hcl.Attribute `hcl:"client_id,optional"`
	ClientSecretEnvVar *hcl.Attribute `hcl:"client_secret_env_var,optional"`
	Scopes             *hcl.Attribute `hcl:"scopes,optional"`
	CallbackPort       *hcl.Attribute `hcl:"callback_port,optional"`
	Resource           *hcl.Attribute `hcl:"resource,optional"`
	Grant              *hcl.Attribute `hcl:"grant,optional"`
	PrivateKeyFile     *hcl.Attribute `hcl:"private_key_file,optional"`
	DeclRange          hcl.Range      `hcl:",def_range"`
}
