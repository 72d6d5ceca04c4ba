// Package sdk is the leaf of toolgate's plugin SDK: the constants, types and
// errors shared by every plugin kind and by the host.
//
// Plugin authors import one kind package and call its Serve from main:
//
//	func main() { hook.Serve(policy.New(sdk.NewLogger("policy"))) }
//
// [github.com/toolgate/toolgate/sdk/hook], [github.com/toolgate/toolgate/sdk/guardian]
// and [github.com/toolgate/toolgate/sdk/launcher] hold the Go interface of
// each kind, its Serve, the gRPC shims for both sides, and the host-side
// client. [github.com/toolgate/toolgate/sdk/plugintest] runs a plugin
// in-process or as a real binary for tests. The language-neutral contract,
// for authors in other languages, is the set of .proto files under
// sdk/proto/toolgate; its transport and error rules are documented at the
// top of sdk/proto/toolgate/plugin/v1/plugin.proto.
//
// # What this package owns
//
// The go-plugin [Handshake] and wire [ProtocolVersion], the API versions a
// plugin reports in [Info], plugin [Kind]s, the config schema a plugin
// declares ([ConfigSchema]) and the [Diagnostic]s it returns from
// Configure, MCP tool [Annotations], the logger plugins write ([NewLogger]),
// and the errors a host sees when a plugin call fails ([ErrPluginExited],
// [ErrPluginUnavailable], [ErrBadResponse], [ErrNotConfigured],
// [PluginError]).
//
// It must not import any other toolgate package (the kind packages import
// it), nor the MCP go-sdk: the SDK's types are plain Go, and arguments are
// JSON (json.RawMessage). Nothing in sdk/ imports host/ or plugins/.
//
// # Stability
//
// The protocol is versioned in three layers, and each changes only in the
// way stated:
//
//  1. [Handshake] never changes. A wire-incompatible protocol gets a new
//     go-plugin version next to [ProtocolVersion] (plugins and hosts serve
//     and accept several versions side by side; go-plugin picks the highest
//     common one), never a changed meaning of version 1.
//  2. Within a wire version, messages only gain fields: field numbers are
//     never renumbered or reused, enum values never change meaning, and a
//     new required behaviour is an optional capability that a plugin
//     announces in [Info.Capabilities]. A removed field's number and
//     name are `reserved`; a removed RPC, message or capability is listed
//     in a comment of the .proto (protobuf cannot reserve those names):
//     none is ever reused. Old plugins keep working with new hosts and
//     the other way round.
//  3. [Info.APIVersions] lets a plugin serve several API versions of its
//     kind's service at once; the host uses the highest one it knows.
//
// The Go API follows the same promise: exported names keep their meaning;
// new behaviour arrives as new optional interfaces (like [Configurer]) or
// new struct fields whose zero value keeps the old behaviour.
//
// # Concurrency
//
// Everything here is immutable data or safe for concurrent use. The kind
// packages state their own contracts; in short, the host may call a plugin
// concurrently, so implementations must be safe for concurrent use.
package sdk
