// Package execution runs one tool call that approval already allowed and
// shapes what comes back.
//
// It owns:
//   - parsing the model's argument text ([ParseArguments]): empty means no
//     arguments, anything but a JSON object is refused before the server
//     is contacted;
//   - the request _meta ([Meta]): the call id and the session (thread) id
//     always, sandbox state only for a server that declared one of the
//     sandbox capabilities at initialize (see below);
//   - the call itself through a [Caller] (the connection manager), with
//     the caller's timeout and progress callback passed through; the
//     active-time clock and notifications/cancelled belong to mcpclient;
//   - the model projection ([ModelProjection]): media the model cannot
//     take replaced by a note, structuredContent preferred, a wall-time
//     header, middle truncation to the model's byte budget ([Truncate]);
//   - the event projection ([EventProjection]): the raw result for the
//     audit trail, capped at [EventResultMaxBytes];
//   - what the call's tool_call_end records ([Result].EventResult and
//     EventError, redacted); host/pipeline emits the event.
//
// It must not approve or deny (package approval does, before this), route
// by model name (the router resolves the raw route first), retry a call
// (a tools/call may have side effects), or emit events (host/pipeline
// does). It logs only through the injected logger and never logs
// arguments or results above debug level. It takes its own [Model] and
// options, not config types (the host translates the model block), and
// must not import host/config.
//
// # Sandbox state in _meta
//
// A server opts in through capabilities.experimental at initialize:
//
//	"toolgate/sandbox-state": {}     → _meta["toolgate/sandbox-state"] =
//	                                   {"permissions": "<profile>", "cwd": "<dir>"}
//	"codex/sandbox-state-meta": {}   → _meta["codex/sandbox-state-meta"] =
//	                                   {"permissionProfile": "<profile>", "sandboxCwd": "file://<dir>"}
//
// The second is the key and shape Codex uses, so servers written for Codex
// work unchanged. <profile> is the approval block's permissions value
// (read-only, workspace-write, full-access). Nothing else (environment,
// tokens, config) is ever put in _meta.
//
// # Errors seen by the model
//
// A transport or host failure (timeout, crash, unknown server) reaches the
// model as the text "tool call error: tool call failed for `server/tool`:
// <cause>" after the wall-time header; a [*mcpclient.TimeoutError] keeps
// its literal "timed out awaiting tools/call after Ns". A result with
// isError true is shown like any other result; only its status differs.
//
// # Concurrency
//
// An [Executor] is immutable after [New] and safe for concurrent use; each
// Execute runs on the caller's goroutine and starts none of its own. The
// projection functions are pure.
package execution
