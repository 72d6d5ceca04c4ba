// Package approval owns the question "may this concrete tool call run?":
// the ordered decision procedure ([Procedure.Decide]), the rules it is
// built from ([ResolveMode], [AutoApproved], [RequiresApproval]), the
// per-session memory of "Allow for this session", the hand-off of "Allow
// and don't ask me again" to a config writer, and the policy for
// server-initiated elicitations ([Procedure.Elicit]).
//
// It also defines the seams the procedure consults, so that their
// implementations depend on this package and not the other way round:
// [Hook] (PermissionRequest hooks), [Reviewer] (the Guardian) and [Asker]
// (whoever answers the user path of one request: the asking half of
// pipeline.Upstream, carried on the [Request] as the session it came
// from — host/terminal, a gateway call, the inbox — or a test's).
//
// What it must not do: execute calls, talk to MCP servers, start
// processes or do terminal I/O. A denial is a value ([Decision] with its
// Text for the model), never an error: the caller returns that text to
// the model and never contacts the server.
//
// Fail closed: the zero [Decision], the zero [Choice] and the zero
// [HookVerdict] outcome that is not understood all deny or decline. A hook
// that errors, panics or answers nonsense denies unless its on_error is
// "skip"; a reviewer that errors or answers nonsense denies.
//
// Concurrency: a [Procedure] is safe for concurrent use. Its only mutable
// state is the approval memory (mutex-guarded sets: "for this session",
// shared across reloads, and "don't ask me again" written since the
// config in force was loaded, not shared) and a mutex that serializes
// Persist. Hooks, the reviewer and the Asker may be
// called concurrently for different calls.
//
// Examples: [New] builds the procedure a front end uses (an Asker, a
// Persist) and shows "Allow for this session" remembered; [Procedure.Decide]
// shows the annotation rules and a denial's text for the model.
package approval
