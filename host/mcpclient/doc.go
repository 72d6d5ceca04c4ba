// Package mcpclient is the host's client for ONE MCP server: it builds the
// transport (stdio over a [launch.Process], or Streamable HTTP), runs the
// handshake, lists tools with pagination limits and sends tools/call.
//
// It owns:
//   - the connection state machine (connecting → ready → closed) and the
//     reason a session ended (the server crashed, exited, or was closed);
//   - protocol-version selection (see [Options.ProtocolVersion]): the
//     default never hangs on a server that ignores unknown requests;
//   - the stdio connection (stdio.go): newline-delimited JSON-RPC read on
//     go-sdk's reader goroutine without a hand-off, a bad stdout line
//     reported with a redacted quote and the fix;
//   - the stderr of a stdio server: every line is logged under the server's
//     name and the last lines are kept so a startup failure can quote them,
//     both with the server's credential-named env values redacted;
//   - per-call plumbing: progress routing by token and the tool-call
//     timeout, which pauses while the server waits on an elicitation that a
//     human must answer or on a sampling request (declared only with a
//     Sample handler; without one it is refused with an error naming
//     forward_sampling); elicitations reach the handler without go-sdk's
//     schema check, which is stricter than the specification;
//   - Streamable HTTP in depth (http.go, recover.go): static headers; the
//     status mapping of every POST answer the host cannot use into
//     [AuthError] (401 with a challenge, 403 insufficient_scope),
//     [ErrSessionExpired] (404 for a session id) or [HTTPError] (anything
//     else, with a redacted body preview of at most 8192 bytes); retries
//     of the handshake and tools/list only ([RetryPolicy]); re-initializing
//     an expired session once and replaying the request once, shared by
//     concurrent callers; the OAuth handler asked at most once per request;
//     max_result_bytes and the nesting limit on JSON bodies (http.go) and
//     on event streams (sseguard.go), before go-sdk decodes either.
//
// It must not decide anything: which servers exist, retries across
// restarts, tool filters and naming belong to the manager and catalog;
// approval and result shaping belong to their packages; credentials and
// logins belong to package oauth (this package only calls the handler it
// is given).
//
// A Client is safe for concurrent use once Connect has returned.
package mcpclient
