// Package host is the composition root: it builds the event bus, the audit
// log, the environment registry, the launchers and the connection manager
// from a projected configuration, and closes them in order.
//
// It holds no logic of its own: every decision lives in the package that
// owns its verb (manager for discovery, exposure, approval, execution).
// Front ends — the CLI, the gateway, Go callers — build a Host, Start it,
// and drive steps through it. Who answers a request is never the host's:
// each request carries its session (pipeline.Upstream). The host only
// routes what a server sends back during a call (elicitation, sampling,
// log messages) to the session of that call (pipeline.Running), and what
// belongs to no call to its Listeners (the gateway's sessions).
//
// A program that embeds a Host calls [RunSupervisorIfAsked] first thing
// in main, as toolgate does: it is where the supervisor that ends the
// servers' descendants when the program is killed runs (see
// docs/processes.md); without it, setsid descendants outlive a SIGKILLed
// program.
//
// The package Example embeds a Host in a Go program: a configuration, its
// servers started, and one step's tools and call; the gateway package's
// Example serves a Host to an MCP client.
package host
