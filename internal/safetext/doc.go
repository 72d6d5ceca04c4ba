// Package safetext makes text that came from a server (tool names, stderr
// lines, error texts, descriptions) safe to print on a terminal or write
// into a log: control characters that would move the cursor, clear the
// screen or forge a line, and bidirectional-override characters that
// would make text read differently from what it is (U+202E), and other
// invisible format characters (zero-width space, tag characters) are
// shown as visible escapes instead of acting. Invisible is the one
// definition of what counts; every output format (plain lines, blocks,
// JSON) goes through this package.
//
// It owns only that rendering. It must not redact secrets (see the
// callers' redaction), shorten text, or change text that is already safe:
// printable text, including every script and emoji, comes out unchanged.
package safetext
