// Package glob owns the one glob syntax toolgate uses wherever a config
// names tools or servers by pattern: hook match {} blocks, the policy
// hook's rules, exposure's never_defer and a server's enabled_tools /
// disabled_tools.
//
// Syntax (the whole name must match; matching is case-sensitive and works
// on Unicode characters, not bytes):
//
//	pattern  matches
//	*        any run of characters, possibly none, except "/"
//	**       any run of characters, possibly none, "/" included
//	?        one character except "/"
//	[abc]    one character of the class; ranges as in [a-z]
//	[!abc]   one character not in the class and not "/" ([^abc] also works)
//	\x       the character x itself (\*, \?, \[, \\)
//
// Everything else matches itself. A segment is the text between two "/":
// MCP tool names may use "/" as a namespace separator (for example
// "github/create_issue"), so "*" stays inside one such segment and "**"
// crosses them. Nothing else separates segments: in the flat model name
// "mcp__files__read", "mcp__files__*" matches every tool of the server
// "files", and "mcp__files*" also matches the tools of "files2".
//
// A bad pattern (an unclosed "[", a trailing "\", an empty class, a class
// that would match "/", three stars in a row, an empty pattern) is an
// error from [Compile], so callers report it when the configuration is
// loaded, never when a call is matched.
//
// What it must not do: know about configuration, tools or servers. It
// only compiles and matches strings. A compiled [Pattern] is immutable and
// safe for concurrent use.
package glob
