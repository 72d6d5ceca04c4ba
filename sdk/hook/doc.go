// Package hook is the SDK for hook plugins: code that takes part in the
// approval of every MCP tool call the model proposes.
//
// A hook implements [Hook] (embedding [Base] to get "no opinion" for the
// events it does not care about) and serves it from main in one line:
//
//	type denyDeletes struct{ hook.Base }
//
//	func (denyDeletes) PermissionRequest(_ context.Context, req hook.Request) (hook.PermissionResult, error) {
//		if strings.HasPrefix(req.Tool, "delete") {
//			return hook.Deny("deleting is not allowed here; ask the user to do it"), nil
//		}
//		return hook.NoDecision(), nil
//	}
//
//	func (denyDeletes) Events() []hook.Event { return []hook.Event{hook.EventPermissionRequest} }
//
//	func main() { hook.Serve(denyDeletes{}) }
//
// # Events
//
//   - PreToolUse runs first for every call, even one the user already
//     approved for the session: it may let the call continue, block it, or
//     rewrite its arguments.
//   - PermissionRequest runs when the call needs approval: any deny wins at
//     once, otherwise an allow approves, otherwise the reviewer decides.
//   - PostToolUse sees the call's result and may add a note for the model.
//
// A hook that handles only some events says so by implementing
// [EventLister]; the host then never calls it for the others. Without it,
// the hook is called for all three.
//
// A hook that fails (returns an error, times out, crashes, or answers
// something the protocol does not allow) counts as failed: the host then
// denies the call or skips the hook, as the user configured. A denial is a
// result ([Block], [Deny]), never an error.
//
// # Host side
//
// The host dispenses a [*Client] through go-plugin with
// VersionedPlugins(nil) and calls it like any [Hook]; its errors match the
// sdk sentinels (sdk.ErrPluginExited, sdk.ErrBadResponse, ...) as
// described in package sdk.
//
// This package must not import anything of the host, nor the MCP go-sdk:
// requests carry plain Go values and JSON.
//
// # Concurrency
//
// The host calls a hook concurrently (several calls, several sessions), so
// implementations must be safe for concurrent use. A [*Client] is safe for
// concurrent use. Every method receives the host's deadline and
// cancellation in its ctx; implementations must return when it is done.
package hook
