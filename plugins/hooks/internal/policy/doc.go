// Package policy is the toolgate-hook-policy plugin: declarative allow / deny
// / ask rules, written in the plugin's config {} block, applied to every
// PermissionRequest and PreToolUse event.
//
// A rule matches on the server name and raw tool name (globs with the
// product's one syntax, internal/glob: * within a "/"-separated segment,
// ** across segments), the tool's
// MCP annotations, and argument values: a path argument that resolves outside
// a directory (symlink-safe, relative paths taken against the call's cwd), a
// URL argument whose host is not in a list, or a regular expression over a
// string argument. All conditions of a rule must hold. Rules are tried in
// order for the event at hand; the first match decides, and when none
// matches the top-level default decides.
//
// Decisions map onto the hook protocol:
//
//	decision  PermissionRequest    PreToolUse
//	allow     Allow                Continue
//	deny      Deny(message)        Block(message)
//	ask       NoDecision           Continue
//
// Semantic errors in the rules (an unknown decision or event, a bad glob or
// regular expression, a rule with no condition, an argument block with no
// test or several) are returned from Configure as diagnostics whose attribute
// path names the offending attribute, e.g. rule.2.argument.0.regex, so that
// the host reports them at the right line of the user's file.
//
// What it must not do: import the host or the MCP SDK, log argument values
// (they may hold secrets), or read or write files (path tests only resolve
// symlinks, see package pathscope).
//
// Concurrency: a *Policy is safe for concurrent use. Configure swaps the
// rule set atomically; a call sees either the old or the new rules, never a
// mix, and a refused configuration leaves the old rules in place.
package policy
