package sdk

import (
	"context"
	"encoding/json"
	"os"
	"slices"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
)

// Handshake is the go-plugin handshake every toolgate plugin and the host
// share. The cookie only stops a plugin from being run by hand by mistake
// ("This binary is a plugin..."); it is not a security feature. It never
// changes: a new wire version is added as a new key of VersionedPlugins, not
// by editing this value.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "TOOLGATE_PLUGIN",
	MagicCookieValue: "9f1c7e5a2b3d4c60",
}

// ProtocolVersion is the go-plugin wire version of the services in
// sdk/proto/toolgate/*/v1 (hook.v1, guardian.v1, launcher.v1, plugin.v1).
const ProtocolVersion = 1

// APIVersion is the API version of each kind's v1 service that this SDK
// implements; plugins built with it report it in [Info.APIVersions].
const APIVersion = "1"

// EnvLogLevel names the environment variable through which the host tells
// a plugin the lowest log level it keeps (trace, debug, info, warn, error).
const EnvLogLevel = "TOOLGATE_PLUGIN_LOG_LEVEL"

// Kind is what a plugin does for the host. Its values are the ones a config
// file's plugin block uses for kind.
type Kind string

// Plugin kinds.
const (
	// KindHook plugins take part in every call's approval (package hook).
	KindHook Kind = "hook"
	// KindGuardian plugins review calls instead of a human (package guardian).
	KindGuardian Kind = "guardian"
	// KindLauncher plugins start stdio MCP servers (package launcher).
	KindLauncher Kind = "launcher"
)

// CapabilityConfigure is listed in [Info.Capabilities] by plugins that
// implement [Configurer].
const CapabilityConfigure = "configure"

// Info describes a plugin: what the Info RPC returns.
type Info struct {
	// Name is the plugin's own name (the executable's base name unless the
	// plugin implements [Identifier]). Hosts name plugins after their config
	// block; this one is for logs.
	Name string
	// Kind is the plugin's kind.
	Kind Kind
	// Version is the plugin's release version, free form ("" if unknown).
	Version string
	// APIVersions lists the API versions of the kind's service that the
	// plugin implements; the host picks the highest it also speaks.
	APIVersions []string
	// Capabilities lists optional behaviour the plugin implements, such as
	// [CapabilityConfigure] or, for hooks, the events it handles.
	Capabilities []string
	// ConfigSchema describes the plugin's config block; nil means the plugin
	// takes no configuration.
	ConfigSchema *ConfigSchema
}

// Has reports whether the plugin listed capability c.
func (i Info) Has(c string) bool { return slices.Contains(i.Capabilities, c) }

// Identity is a plugin's name and version as reported in [Info].
type Identity struct {
	Name    string
	Version string
}

// Identifier may be implemented by a plugin of any kind to name itself and
// its version in [Info]. Without it, the name is the executable's base name
// and the version is the main module's version from the build info.
type Identifier interface {
	Identity() Identity
}

// Configurer may be implemented by a plugin of any kind that takes a
// configuration. The host decodes the plugin's config block with the schema
// and sends the result to Configure as a JSON object before any other call
// (an empty object when the block is absent), and may call Configure again
// later.
//
// A plugin that cannot work until it is configured returns
// [ErrNotConfigured] from its other methods; the host then sees
// [ErrNotConfigured] too.
type Configurer interface {
	// ConfigSchema describes the config block. It must not depend on
	// configuration.
	ConfigSchema() ConfigSchema
	// Configure applies config, a JSON object shaped by the schema. It
	// returns the problems found; any diagnostic of [SeverityError] means the
	// configuration was refused and the previous one (if any) stays.
	Configure(ctx context.Context, config json.RawMessage) []Diagnostic
}

// NewLogger returns the logger a plugin should use: hclog JSON lines on
// stderr, which the host re-emits under its own logger, at the level the
// host asks for in [EnvLogLevel] (info when unset or unknown).
//
// Create it before calling Serve: Serve redirects os.Stderr to a pipe
// that the host does not log, and the logger keeps the original stderr.
func NewLogger(name string) hclog.Logger {
	level := hclog.LevelFromString(os.Getenv(EnvLogLevel))
	if level == hclog.NoLevel {
		level = hclog.Info
	}
	return hclog.New(&hclog.LoggerOptions{
		Name:       name,
		Level:      level,
		Output:     os.Stderr,
		JSONFormat: true,
	})
}

// Annotations are the MCP annotations (hints) of the tool a call targets,
// as its server declared them. They are untrusted unless the user trusts
// the server.
type Annotations struct {
	// ReadOnly is readOnlyHint.
	ReadOnly bool
	// Destructive is destructiveHint; nil when the server did not say (MCP's
	// default is true).
	Destructive *bool
	// OpenWorld is openWorldHint; nil when the server did not say (MCP's
	// default is true).
	OpenWorld *bool
	// Idempotent is idempotentHint.
	Idempotent bool
	// Title is the annotations' title.
	Title string
}

// Caller is who made a call, as the host established it from the
// caller's OAuth access token (toolgate serve with an auth block). nil
// when the host does not know: stdio, or a gateway with a static token.
type Caller struct {
	// Subject is the token's sub claim, unique per issuer.
	Subject string
	// Issuer is the token's iss claim.
	Issuer string
	// ClientID is the OAuth client the token was issued to.
	ClientID string
	// Email is the token's email claim, if any.
	Email string
	// Groups are the groups the token lists for the caller.
	Groups []string
	// Scopes are the scopes the token grants.
	Scopes []string
	// Claims are further claims the operator selected, as text.
	Claims map[string]string
}
