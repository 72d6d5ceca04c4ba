// Package host is the composition root: it builds the event bus, the audit
// log, the environment registry, the launchers and the connection manager
// from a projected configuration, and closes them in order.
//
// It holds no logic of its own: every decision lives in the package that
// owns its verb (manager for discovery, exposure, approval, execution).
// Front ends — the CLI, the gateway, Go callers — build a Host, Start it,
// and drive steps through it.
//
// The package Example embeds a Host in a Go program: a configuration, its
// servers started, and one step's tools and call; the gateway package's
// Example serves a Host to an MCP client.
package host
