// Package pipeline owns the one path every request to an MCP server
// takes, whatever door it came in by (the CLI, the model's built-in
// tools, a gateway handler): [Pipeline.Do] runs its explicit stages in
// order and is the only code that sends a request to a server.
//
// The stages, in order ([Stage]):
//
//   - begin: the tool_call_begin event (and so the audit record); it
//     comes first so that every refusal below is on record too;
//   - admit: serve's rate limits; a refusal is a denial whose text says
//     when to retry;
//   - pre-hooks: PreToolUse hooks, which may block or rewrite arguments;
//     for the other kinds that reach a server the hooks that declared
//     PreResourceRead / PrePromptGet, which may block (a subscribe is
//     asked as a read, a completion as a get of its prompt or a read of
//     its template);
//   - decide: the approval procedure (modes, remembered approvals,
//     PermissionRequest hooks, Guardian, the human);
//   - freshness: the caller's guard that the target did not change while
//     approval waited (the step's catalog revision), taken with the step's
//     turn so non-parallel calls run one at a time;
//   - execute: the request itself (package execution for tool calls, the
//     connection manager for the other kinds, the host for built-ins);
//   - post-hooks: PostToolUse hooks' notes;
//   - end: exactly one tool_call_end for every request that began.
//
// A [Kind] declares which stages apply (see [Kind.Stages]): a resource
// read is admitted and audited but never put to a human.
//
// Why its own package and not approval grown into it: approval answers
// one question ("may this call run?") and must not execute anything;
// execution runs one approved call and must not decide. The pipeline is
// the order between them and the single owner of the request events;
// keeping it apart leaves both with the single job their docs promise.
// exposure keeps the step's snapshot, the routing of model names and the
// built-in tools' specs, and hands each routed request here.
//
// The session a request came from is its [Upstream], on the [Request]:
// the decide stage hands it to approval as the request's Asker, and the
// execute stage of a tool call gives it the server's progress and records
// the call in [Running], where what the server sends back during the call
// (elicitation, sampling, log messages) finds it again.
//
// What it must not do: route model names (exposure), decide approval
// itself (approval), shape results for the model (execution), or talk to
// the upstream client other than through the request's Upstream. It never returns an error for a refused request:
// a refusal is a [Result] with Status events.CallDenied and the text.
//
// A Pipeline is immutable and safe for concurrent use; the host builds a
// new one when a reload replaces approval, execution or the limits.
package pipeline
