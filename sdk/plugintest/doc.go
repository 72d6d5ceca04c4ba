// Package plugintest lets plugin authors (and the host's own tests) run a
// plugin in a test in a few lines, exactly as the host would talk to it.
//
// In-process, over a real gRPC connection on a unix socket, with no
// subprocess: [Hook], [Guardian] and [Launcher] serve an implementation
// through the SDK's shims and return the host-side client:
//
//	func TestDenyDeletes(t *testing.T) {
//		h := plugintest.Hook(t, denyDeletes{})
//		res, err := h.PermissionRequest(t.Context(), hook.Request{Tool: "delete_file"})
//		...
//	}
//
// As a real process started through go-plugin (handshake, AutoMTLS, gRPC
// only, killed with the test and with the test binary): [RunBinary] and
// [StartBinary] take the path of a built plugin.
//
// Against recorded traffic: [LedgerCalls] reads the tool calls of a
// toolgate audit ledger as hook requests, and [ReplayPermission] asks a
// hook about each of them, so a rule can be tested on real calls before
// it goes live.
//
// Everything a helper starts is stopped by t.Cleanup. The package must not
// import anything of the host.
//
// # Concurrency
//
// The returned clients are safe for concurrent use, like the host's.
package plugintest
