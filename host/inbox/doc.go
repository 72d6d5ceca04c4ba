// Package inbox owns held approvals: when the approval chain of toolgate
// serve needs a human and the upstream client cannot be asked (no
// elicitation, or approval { inbox { route { to = "inbox" } } }), the
// call is held as a pending approval that a human answers from a browser
// (/approvals), the terminal (toolgate approvals / approve / deny, through
// the JSON API) or a chat message (the notify webhook posts each new
// pending approval with its link).
//
// # What it owns
//
//   - The pending-approval [Store] (an in-process one by default) and the
//     life of an [Approval]: pending, then approved, denied or expired;
//     an approval is single-use and bound to the exact call ([Binding]:
//     server, tool, definition hash, canonical arguments hash, caller).
//   - The two ways to hold ([Inbox.Ask]): hold keeps the MCP call open,
//     reporting "waiting for approval: <link>" through the progress
//     callback the front end gives it, until an answer or the timeout;
//     retry denies at once with the approval's id and link, and the same
//     call made again after approval runs.
//   - Its place in a call ([Inbox.Wrap]): a decorator of a serve
//     session's pipeline.Upstream, the third implementation beside the
//     terminal and the session itself. It takes the approval question
//     when a route sends the call to the inbox or the client cannot be
//     asked, and reports the wait through the session's progress and log.
//   - Who may answer: approvers authenticate with what the gateway has
//     (its OAuth resource server or static token, see [Authenticate]);
//     approvers = [...] narrows them; separate_approver forbids
//     answering one's own call. Every answer (and every refused one) is
//     an events.HeldApproval in the audit log.
//   - The web page, its JSON API and live updates (http.go): server-rendered
//     HTML and one small script embedded in the binary, server-sent events,
//     CSRF tokens on cookie sessions, a strict Content-Security-Policy.
//   - The webhook (notify.go): a post per new pending approval, retried
//     with backoff on a goroutine of its own; it never delays a call, and
//     its URL and headers never reach a log.
//
// # Replicas
//
// Pending approvals live in the process that holds the call: a held MCP
// call is a request open on one replica, and session affinity (the
// Mcp-Session-Id routed to the replica that opened it) keeps every call
// of a session there. The link in a denial or a notification is the
// inbox URL (approval { inbox { url } }); behind a load balancer that URL
// must reach the replica holding the call (a per-replica URL, or
// affinity on the approval id). A replica asked about an approval it
// does not hold answers 404 with a text saying that approvals live in
// the replica that holds the call, so the CLI and the page say so
// plainly. The [Store] interface is where a shared store would plug in
// later; there is deliberately none today.
//
// What it must not do: decide approval (package approval does; the inbox
// only answers the user step), run calls, or log secrets (arguments are
// redacted on display; webhook headers are never logged).
//
// Concurrency: an [Inbox] is safe for concurrent use. Its goroutines (the
// webhook sender, the expiry sweeper) end with Close.
package inbox
