// Package wire holds what every plugin kind shares on the wire: the one
// place where errors are translated to and from gRPC statuses
// (errors.go), the PluginService (Info, Configure) both sides speak
// (plugin.go), the go-plugin serve configuration (serve.go), and the
// direct lane that carries a kind's unary calls over a plain unix socket
// (lane.go; offering and opening it, lane_linux.go), and the one-shot
// private socket a plugin offers the host over gRPC, used by the lane and
// the launcher's descriptor hand-off (Rendezvous, rendezvous_linux.go).
//
// It must not know any kind's service (the kind packages build on it) and
// must not be importable outside sdk/: its types are protobuf types.
//
// Everything here is safe for concurrent use.
package wire
