// Package clients knows the MCP configuration files of the clients people
// already use — Claude Desktop, Claude Code, Codex CLI, Cursor, VS Code
// and Gemini CLI: where each keeps them on each OS, how each writes a
// server, and how to turn those servers into toolgate server blocks
// ([Import]) or point the client at toolgate instead ([Connect]).
//
// It owns the formats only. It reads and returns bytes and never writes
// a file, never reads the process environment (callers pass [Env]), and
// never decides what toolgate does with a server: the caller (host/cli)
// writes files, and host/config validates the HCL it produces.
//
// Secrets: a literal that looks like a credential is never copied into
// the HCL or into any message; it becomes a reference to an environment
// variable, and the [Result] says which variable to set.
//
// Edits of a client's file are made in place on the original text, so
// comments, layout and every member toolgate does not understand survive
// byte for byte.
package clients
