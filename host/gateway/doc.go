// Package gateway serves the host's governed tool set upstream: any MCP
// client (an IDE, a desktop assistant, another agent) connects to
// `toolgate serve` over stdio or Streamable HTTP and gets the tools of
// every configured server through one endpoint, each call put through the
// same approval chain as in the CLI.
//
// # What it owns
//
//   - Upstream sessions. Each is its own go-sdk server, its own
//     exposure.Step and its own approval session: the session id is the
//     step's session id (session memory, audit records) and, over HTTP, the
//     Mcp-Session-Id; a 2026-07-28 client over HTTP, which has no
//     session id, has one per caller and client name (modern.go). A
//     session keeps its step until the catalog changes; then it takes a
//     new one and go-sdk sends notifications/tools/list_changed.
//     An HTTP session with no request open (no POST in flight, no GET
//     event stream) for Options.SessionTimeout is closed, so clients that
//     go away without DELETE do not hold sessions for the gateway's life.
//   - Upstream names. Tools are served under their flat model names
//     (mcp__<server>__<tool>); a server with prefix = false keeps its raw
//     names, so a gateway in front of one server is transparent. A name
//     that collides or that MCP does not allow ([A-Za-z0-9_.-], at most
//     128) is a configuration error naming both owners and the fix
//     ([NameError], reported by New). A conflict that arises later (a
//     reload, a late server, a tools/list change) is logged, and the tool
//     that held the name keeps it, also through its server's downtime.
//     Descriptions, titles, input and
//     output schemas, annotations, icons and _meta are served as listed.
//     Schemas go-sdk's AddTool would panic on are checked first: such a
//     tool is left out with a warning, never a crash.
//   - Resources, templates, prompts and completions (resources.go,
//     subscribe.go): declared when a downstream server declares them,
//     merged, routed to the owner; colliding URIs rewritten to
//     toolgate://<server>/<uri> ([SplitURI] undoes it); prompts named like
//     tools; subscriptions forwarded once and updates delivered, coalesced,
//     only to the sessions that subscribed.
//   - Deferred tools. When exposure defers tools, the session serves
//     tool_search; tools it finds are added to that session's list
//     (list_changed). Clients that ignore list_changed can call a found
//     tool by the name the search returned: it is registered at once.
//   - Each call as the pipeline.Upstream of its requests (asker.go):
//     the step gets the call on its exposure.CallRequest, and the
//     pipeline talks back to it, never through a context value or a
//     process-wide asker. Progress from the downstream server reaches
//     the caller under the caller's progress token; cancelling the
//     upstream request cancels the downstream call; downstream log
//     messages go with the calls running on that server (the host finds
//     them), else to every session (a host.Listener); a downstream
//     elicitation goes to the client whose call caused it, its form as
//     the server wrote it (elicitVerbatim), and so does a sampling
//     request (serve's forward_sampling), each a request of the
//     pipeline (kinds elicitation and sampling), so audited like every
//     other request. With an inbox, the call's Upstream is the inbox's
//     decorator of it (inbox.Inbox.Wrap).
//   - The user step of approval (the call's AskApproval): a form
//     elicitation naming server, tool, arguments and annotations, with the
//     choices Allow / Allow for this session / Allow and don't ask me
//     again / Cancel; the form's decline action rejects. A client without
//     elicitation support is not asked: the call is denied with a text
//     that says so and how to configure a hook or the Guardian.
//   - HTTP listener safety ([NewEndpoint], [Listen], [Gateway.Handler]):
//     loopback by default; a loopback listener answers only requests whose
//     Host (and Origin, if any) is local, which defeats DNS rebinding; a
//     bearer token (serve { token_env_var }), when configured, is checked
//     on every request in constant time, and beyond loopback a token or
//     OAuth access tokens are required. Loopback is reachable by every
//     local user; unix:/path listens on a socket created with mode 0600
//     instead (not on Windows).
//   - Callers (serve { auth }, auth.go): package tokenauth validates OAuth
//     access tokens, the caller they name rides the request's context into
//     the session and every call (host/identity), the protected-resource
//     metadata (RFC 9728) is served without a token, and a session answers
//     only the caller who opened it (403 otherwise), so what it remembers
//     "for this session" never serves another caller.
//   - Resource bounds (limits.go): only an initialize request opens a
//     session; serve { max_sessions } caps open sessions (HTTP 503
//     beyond); a client message is at most [MaxMessageBytes] (HTTP 413);
//     each call queues at most 256 progress and 256 log notifications for
//     its client, dropping the oldest and logging the count.
//
// What it must not do: decide approval (package approval does, through
// the host), talk to downstream servers (the manager does), or shape
// results: the downstream result goes upstream as the server sent it.
//
// # Clients of two protocol generations
//
// A client on 2025-11-25 or older is asked for input (approval forms,
// forwarded elicitations) with elicitation/create inside the tools/call
// request. A 2026-07-28 client is asked the new way: the call ends its
// request with an input-required result (inputRequests, requestState),
// keeps running, and resumes when the client retries with the answers.
// A client that never comes back has its call cancelled after
// Options.InputTimeout. Both transports offer every version: over HTTP,
// requests of 2025-11-25 and older go to go-sdk's stateful handler,
// 2026-07-28 requests (by their Mcp-Protocol-Version header) to its
// stateless one, the only one go-sdk serves that version on.
//
// # Outcomes: tool error or protocol error
//
// What the upstream client sees for each outcome of a tools/call:
//
//	outcome                                          upstream sees
//	-----------------------------------------------  -----------------------------------------------
//	the server answered                              its CallToolResult unchanged (content of every
//	                                                 type, structuredContent, isError, _meta)
//	the server answered isError                      passed through unchanged (a tool error)
//	denied: annotations/mode, hook, Guardian,        tool result, isError, the denial text (the model
//	  user declined or cancelled, policy never,      can adapt); the server is never contacted
//	  nobody to ask (client without elicitation)
//	over a serve limit (rate limit)                  tool result, isError, which limit and when to
//	                                                 retry; the server is never contacted
//	server down, crashed, timed out, transport       tool result, isError, a short reason
//	  failure, catalog changed since listing; a
//	  tool this session listed, withdrawn because
//	  its server is down
//	tool_search: empty query, bad limit              tool result, isError, the error text
//	unknown tool (never listed, hidden, removed by   JSON-RPC error -32602 (invalid params)
//	  a server that is up)
//	arguments not a JSON object                      JSON-RPC error -32602 (invalid params)
//	unknown or expired requestState (2026-07-28)     JSON-RPC error -32602 (invalid params)
//	the client cancelled the request                 no result (the request is cancelled); the
//	                                                 downstream call is cancelled too
//	toolgate bug (a panic while running the call)    JSON-RPC error -32603 (internal error)
//
// # Concurrency
//
// A [Gateway] is safe for concurrent use; sessions and calls run
// concurrently. Every goroutine it starts (the catalog follower, one
// watcher and one log pump per session, one runner per call) ends by
// Close, which the owner calls after the Serve methods returned.
//
// # Shutting down and readiness
//
// When the context of ServeHTTP or ServeStdio ends (SIGTERM), the gateway
// drains before it ends its sessions: [Gateway.Drain] refuses new
// sessions ([ErrDraining], HTTP 503), makes [Gateway.Ready] fail, emits
// events.Draining and waits, up to Options.DrainGrace, for the calls and
// HTTP requests in flight. Calls still running then are cut: each gets
// ShutdownCutText and its server notifications/cancelled. Over stdio the
// session closes only once those answers are written (answeredTransport
// counts the requests read and not yet answered). Ready also fails while a required server is
// not ready; toolgate serve answers /readyz with it (package telemetry).
// The gateway counts nothing for metrics itself: they come from events.
//
// # Example
//
// The package Example embeds toolgate in a Go program: it loads a
// configuration, builds a serving [host.Host] and a gateway for it, and
// serves one client, which lists and calls a downstream server's tool.
package gateway
