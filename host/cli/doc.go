// Package cli implements the toolgate command line: config discovery and
// diagnostics, the commands, their output formats and exit codes.
//
// It owns presentation only: every command builds a [host.Host] and asks
// it; no command decides anything a library caller could not decide the
// same way. Exit codes are documented in the root command's help.
package cli
