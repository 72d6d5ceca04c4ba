// Package config owns toolgate's HCL configuration: the schema, loading
// and merging files, defaults, validation with Terraform-style diagnostics,
// config discovery, and the one write the host ever makes to a config file
// ("Allow and don't ask me again", [RememberToolApproval]).
//
// Everything else in the host reads the [Config] projection and never
// HCL. Plugin- and environment-owned config {} bodies are the exception by
// design: they are kept undecoded ([Plugin.Config], [Environment.Config])
// and decoded by the plugin host with [DecodeConfigBody] and the schema
// the plugin reports.
//
// What it must not do: start processes, open connections or read anything
// after [Load] returns. The environment is read in Load only (env(), and
// the check that bearer_token_env_var is set); values of environment
// variables, file() contents and URLs never appear in a diagnostic.
//
// Lifecycle: [Discover] picks a path, [Load] returns an immutable *Config
// plus diagnostics, [WriteDiagnostics] renders them. Reload loads again and
// compares blocks with [Server.SameProjection] (and the Plugin and
// Environment variants) to decide what to restart.
//
// Load runs in three steps: each file's blocks are decoded and checked
// with their own defaults; then the references between blocks are
// checked (crossCheck, which only reports); then, when nothing failed,
// the defaults one block takes from another are filled in (resolve: a
// server's forward_sampling from serve's).
//
// Concurrency: a *Config is immutable and safe to share. Load, Discover
// and WriteDiagnostics are safe to call concurrently. RememberToolApproval
// replaces the file atomically, but concurrent calls for the same file
// must be serialized by the caller.
//
// The example of [Load] shows Discover, Load and WriteDiagnostics as a
// front end uses them.
package config
