package pluginhost

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// Errors of starting and using plugins, matched with errors.Is. Every
// error also names the plugin and says how to fix it. Failures of a call
// into a running plugin match the sdk sentinels instead (sdk.ErrPluginExited,
// sdk.ErrBadResponse, context.DeadlineExceeded, ...).
var (
	// ErrChecksumMismatch: the binary's sha256 is not the block's pin.
	// The plugin is not started; its error shows both sums. The user
	// updates sha256 (after checking the binary) or restores the binary.
	ErrChecksumMismatch = errors.New("plugin checksum mismatch")

	// ErrIncompatible: the plugin and the host share no protocol version,
	// no API version, or the plugin is of another kind than its block
	// says. The user rebuilds the plugin against a matching SDK or fixes
	// kind.
	ErrIncompatible = errors.New("incompatible plugin")

	// ErrBinary: the plugin binary is missing, not executable or
	// unreadable. The user builds the plugin or fixes path.
	ErrBinary = errors.New("plugin binary not usable")

	// ErrHandshake: the binary did not complete go-plugin's handshake (it
	// is not a toolgate plugin, printed to stdout before serving, exited
	// or hung during start). Counted like a crash.
	ErrHandshake = errors.New("plugin failed to start")

	// ErrConfig: the plugin's config {} block does not fit its schema,
	// or the plugin refused it. A [*ConfigError] carries the diagnostics.
	ErrConfig = errors.New("invalid plugin configuration")

	// ErrGivenUp: the plugin crashed (or failed to start) too often in a
	// short time and is not restarted until its block changes or the
	// configuration is applied again.
	ErrGivenUp = errors.New("plugin keeps crashing; given up")

	// ErrClosed: the plugin host was closed, or the block was removed or
	// changed by a configuration reload while the call was made.
	ErrClosed = errors.New("plugin host closed")

	// ErrUnknownPlugin: no plugin block of the expected kind has that
	// name.
	ErrUnknownPlugin = errors.New("unknown plugin")
)

// ConfigError is a plugin configuration that was refused, by the host
// (the config {} body does not fit the plugin's schema) or by the
// plugin's Configure. Diags carry source ranges in the user's files;
// render them with config.WriteDiagnostics. It matches [ErrConfig].
type ConfigError struct {
	Plugin string
	Diags  hcl.Diagnostics
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plugin %q: invalid configuration", e.Plugin)
	for _, d := range e.Diags.Errs() {
		b.WriteString("; ")
		b.WriteString(d.Error())
	}
	return b.String()
}

// Is makes a ConfigError match [ErrConfig].
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }
