// Package pluginhost runs toolgate's plugin binaries (hooks, the Guardian,
// launchers) for the host, and is the one place where the SDK's clients
// (sdk/hook, sdk/guardian, sdk/launcher) are translated into the host's
// interfaces: [Hook] implements approval.Hook, [Reviewer] implements
// approval.Reviewer, and the launchers returned by [Plugins.Launcher]
// implement launch.Launcher.
//
// # What it owns
//
//   - Starting a plugin "name" block's binary through go-plugin: the sha256
//     pin checked before exec on a private copy that is then what runs (a
//     mismatch is refused with both sums), gRPC
//     only, AutoMTLS, an environment built from scratch (PATH, HOME, TMPDIR,
//     LANG and sdk.EnvLogLevel at the host logger's level; nothing else of
//     the host's environment reaches a plugin), SIGKILL when the host dies
//     (its internal/contain cell: Pdeathsig on Linux, the supervisor on
//     macOS, a Job Object on Windows), the plugin's log lines re-emitted under
//     plugin.<name> of the host logger.
//   - Negotiation: go-plugin's wire version, then the API version from Info
//     (a plugin with no common version is refused naming both sides), and
//     the kind.
//   - Configuration: the plugin's config schema from Info becomes an
//     hcldec spec; the block's config {} body (for a launcher serving an
//     environment, that environment's config {} body when it has one) is
//     decoded by the host, so env() and file() work and errors point at
//     the user's file, and sent to Configure as JSON. Diagnostics the
//     plugin returns are mapped back to source ranges ([ConfigError]).
//   - Lifetimes: a plugin starts lazily on first use; one process serves
//     every user of a block (concurrent first users wait on one start).
//     A launcher plugin runs one process per (plugin, environment) pair,
//     because its configuration comes from the environment block and
//     Configure configures the whole process. A crash is noticed through
//     go-plugin's exit context: calls in flight fail with an error
//     matching sdk.ErrPluginExited, the next use starts a fresh process
//     after a capped exponential backoff, and a plugin that keeps crashing
//     is given up on ([ErrGivenUp]) until its block changes or the
//     configuration is applied again.
//   - Events: events.PluginState for started, exited, failed and given_up.
//
// # What it must not do
//
// Decide approvals (it reports what a hook or the Guardian answered, and
// any failure as an error, never as an approval: host/approval applies
// on_error), speak MCP (a launcher's process is a byte stream for
// host/mcpclient), or read config files (it is handed a projected
// config.Config, and decodes only the plugin-owned config {} bodies with
// config.DecodeConfigBody).
//
// # Concurrency
//
// A [Plugins] and every adapter it returns are safe for concurrent use. Each
// running plugin process has one goroutine, locked to its OS thread for
// the life of the process (Linux delivers Pdeathsig when the forking
// thread ends, so the thread must outlive the child), plus go-plugin's
// own. [Plugins.Close] stops every process and waits for all of them.
//
// Example:
//
//	plugins := pluginhost.New(cfg, pluginhost.Options{Logger: log, Events: bus})
//	defer plugins.Close()
//	proc := approval.New(approval.Options{Hooks: plugins.Hooks(), Reviewer: plugins.Reviewer(), ...})
//	envs := environment.New(cfg, environment.Options{Local: local, Plugin: plugins.Launcher})
package pluginhost
