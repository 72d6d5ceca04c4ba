// Package environment decides where a stdio server runs: it maps the
// environment a server block names to the launcher that starts its process
// (the built-in local launcher, or a launcher plugin) and to the working
// directory a server falls back to.
//
// It owns the environment registry and its errors. It must not start
// processes itself, speak MCP, or know how a plugin is run: launcher
// plugins reach it through [Options.Plugin].
//
// A Registry is immutable after New and safe for concurrent use.
package environment
