// Package wire holds what every plugin kind shares on the wire: the one
// place where errors are translated to and from gRPC statuses
// (errors.go), the PluginService (Info, Configure) both sides speak
// (plugin.go), and the go-plugin serve configuration and gRPC tuning
// (serve.go).
//
// It must not know any kind's service (the kind packages build on it) and
// must not be importable outside sdk/: its types are protobuf types.
//
// Everything here is safe for concurrent use.
package wire
