package sdk

import "errors"

// Errors a host-side client returns when a plugin call fails. They are
// matched with errors.Is; the kind packages wrap them with the method that
// failed. A denial is never an error: it is a normal result value.
var (
	// ErrPluginExited means the plugin process died (crashed, was killed, or
	// exited) before or during the call. The call's outcome is unknown.
	// Callers treat it as a failed call (approval fails closed) and start a
	// fresh plugin process for the next use, with backoff.
	ErrPluginExited = errors.New("plugin process exited")

	// ErrPluginUnavailable means the plugin did not accept the call although
	// its process has not (yet) been seen to exit: it may be overloaded,
	// wedged, or dying. Callers treat the call as failed; they may retry
	// later, and restart the plugin if it keeps happening.
	ErrPluginUnavailable = errors.New("plugin unavailable")

	// ErrBadResponse means the plugin answered something the protocol does
	// not allow (an unknown or missing enum value, an empty choice, JSON that
	// does not parse). It is a bug in the plugin: callers treat the call as
	// failed and report the plugin so that its author can fix it.
	ErrBadResponse = errors.New("plugin returned an invalid response")

	// ErrNotConfigured means the plugin needs a successful Configure before
	// this call. Callers configure the plugin (the host does so right after
	// starting it) and retry; if Configure reported errors, the user must fix
	// the plugin's config block.
	ErrNotConfigured = errors.New("plugin is not configured")
)

// PluginError is a failure the plugin itself reported for a call (its
// implementation returned an error). Msg is the plugin's message, shown to
// the user as is. Callers treat the call as failed; retrying the same call
// usually fails the same way.
type PluginError struct {
	Msg string
}

func (e *PluginError) Error() string { return "plugin failed: " + e.Msg }
