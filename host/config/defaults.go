package config

import (
	"regexp"
	"time"
)

// Defaults named only inside this package and by callers that want to show
// them (help texts, docs). The ones several packages need are in types.go.
const (
	// DefaultHookTimeout bounds one call into a hook or launcher plugin.
	DefaultHookTimeout = 10 * time.Second
	// DefaultGuardianTimeout bounds one Guardian review; reviews reason
	// over a transcript and need far longer than a hook.
	DefaultGuardianTimeout = 90 * time.Second
	// DefaultDeferCount and DefaultDeferBytes are the exposure auto-mode
	// thresholds.
	DefaultDeferCount = 50
	DefaultDeferBytes = 64000
	// MinNameLimit is the shortest flat model name budget that still fits
	// "mcp__" + a server + a tool + a collision hash.
	MinNameLimit = 32
)

// protocolVersions are the MCP protocol versions protocol_version may pin,
// oldest first. ProtocolAuto is accepted besides these.
var protocolVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// hookEvents are the events a hook plugin may subscribe to with events = [...].
var hookEvents = []string{"PreToolUse", "PermissionRequest", "PostToolUse", "PreResourceRead", "PrePromptGet"}

// namePattern is the rule for server names (and, for consistency, plugin
// and environment names): they become part of model-visible tool names.
var namePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// envNamePattern is what a POSIX shell accepts as a variable name.
var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// definitionPattern is a tool definition hash as approval.DefinitionHash
// writes it.
var definitionPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// defaultConfig is every top-level default, in one place.
func defaultConfig() Config {
	return Config{
		AuditOnError: AuditOnErrorLog,
		Approval: Approval{
			Policy:      PolicyOnRequest,
			Permissions: PermWorkspaceWrite,
			Reviewer:    ReviewerUser,
		},
		Exposure: Exposure{
			Mode:       ExposureAuto,
			NameLimit:  DefaultNameLimit,
			DeferCount: DefaultDeferCount,
			DeferBytes: DefaultDeferBytes,
		},
		Model: Model{OutputBudgetBytes: DefaultOutputBudget},
		Serve: Serve{Listen: DefaultListen, MaxResultBytes: DefaultMaxResultBytes, MaxSessions: DefaultMaxSessions, InitialListWait: DefaultInitialListWait, Ops: ServeOps{DrainGrace: DefaultDrainGrace}},
	}
}

// defaultServer is a server block before any field is read.
func defaultServer(name string) Server {
	return Server{
		Name:           name,
		Enabled:        true,
		StartupTimeout: DefaultStartupTimeout,
		RetryStartup:   true,
		ToolTimeout:    DefaultToolTimeout,
		Prefix:         true,
		RedactResults:  true,
		Environment:    LocalEnvironment,
		// ProtocolAuto lets mcpclient pick a version every released
		// server answers; pinning is the user's explicit choice.
		ProtocolVersion: ProtocolAuto,
	}
}

// MaxMaxTools bounds max_tools: a catalog far past it would make every
// step's tool list and search index slow for everyone.
const MaxMaxTools = 100000

// MaxToolTextBytes bounds max_description_bytes and max_schema_bytes:
// one tool's text past it is no longer a description.
const MaxToolTextBytes = 16 << 20

// defaultPluginTimeout depends on the kind: a Guardian review is a model
// call, a hook or a launcher start is a quick local RPC.
func defaultPluginTimeout(kind PluginKind) time.Duration {
	if kind == KindGuardian {
		return DefaultGuardianTimeout
	}
	return DefaultHookTimeout
}

// defaultOAuthGrant is the interactive flow; client_credentials is opt-in.
const defaultOAuthGrant = "authorization_code"
