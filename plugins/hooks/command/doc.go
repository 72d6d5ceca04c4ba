// Command toolgate-hook-command is toolgate's command hook: it runs an
// external program per PermissionRequest and PreToolUse event, speaking the
// Codex hook protocol, so that hooks can be written in any language and
// existing Codex hook scripts work unchanged. See README.md and package
// github.com/toolgate/toolgate/plugins/hooks/internal/command; this package
// only serves it.
package main
