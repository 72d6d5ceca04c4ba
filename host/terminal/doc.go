// Package terminal is the interactive terminal implementation of
// pipeline.Upstream, the session end of toolgate call's requests: it
// shows a tool call awaiting approval and reads the user's choice, and it
// walks the user through a server's elicitation (a form field by field,
// or a URL to open). It takes no sampling, log messages or progress.
//
// What it owns: terminal I/O only — rendering questions (server-controlled
// text is cleaned of control characters and bidi overrides, long argument
// strings are cut in the middle, the whole block is capped) and parsing
// answers. It must not decide anything: which choices are offered, what an
// answer means for the call and what is remembered all belong to
// host/approval. It never opens URLs, never talks to MCP servers, and never
// prints a field marked as secret (format password/secret, writeOnly) back.
//
// Lifecycle: [New] starts nothing. The first question starts one reader
// goroutine that reads input lines and hands them over on a channel; it
// ends at EOF of the input, on a read error, or after [Terminal.Close]
// (which closes the input when it is an io.Closer, so a blocked Read
// returns). A line the reader took in before a question was shown (a
// stray "y" typed while the model was working) is discarded, so it never
// answers a question the user has not seen.
//
// Concurrency: a Terminal is safe for concurrent use. Questions are
// serialized: one is on screen at a time, the others wait for their turn
// or their ctx. A question returns promptly when its ctx ends.
//
// Example:
//
//	interactive := term.IsTerminal(int(os.Stdin.Fd()))
//	tty := terminal.New(os.Stdin, os.Stderr, terminal.Options{Interactive: interactive, Color: interactive})
//	defer tty.Close()
//	res := step.Call(ctx, exposure.CallRequest{Name: name, Arguments: args, Upstream: tty})
package terminal
