package wire

import (
	"math"
	"os"
	"runtime"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/toolgate/toolgate/sdk"
)

// ServeConfig is the go-plugin configuration every toolgate plugin serves
// with: the toolgate handshake, gRPC only, one kind's plugin under
// sdk.ProtocolVersion (set), and log on stderr as JSON.
func ServeConfig(set plugin.PluginSet, log hclog.Logger) *plugin.ServeConfig {
	return &plugin.ServeConfig{
		HandshakeConfig:  sdk.Handshake,
		VersionedPlugins: map[int]plugin.PluginSet{sdk.ProtocolVersion: set},
		GRPCServer:       NewGRPCServer,
		Logger:           log,
	}
}

// NewGRPCServer is the gRPC server a plugin serves on. Requests may carry
// large tool arguments, so the receive limit matches the one go-plugin sets
// on the host side instead of gRPC's 4 MiB default. The fixed flow-control
// window is the plugin's half of sdk.GRPCDialOptions.
func NewGRPCServer(opts []grpc.ServerOption) *grpc.Server {
	opts = append(opts,
		grpc.MaxRecvMsgSize(math.MaxInt32),
		grpc.InitialWindowSize(sdk.FlowControlWindow),
		grpc.InitialConnWindowSize(sdk.FlowControlWindow),
	)
	return grpc.NewServer(opts...)
}

// ServeOnOneProcessor makes the plugin process run Go code on one
// processor (GOMAXPROCS=1) unless its environment sets GOMAXPROCS. Hooks
// and Guardians answer small questions on the path of every tool call,
// where a gRPC round trip is mostly goroutine hand-offs (client, loopy
// writer, server handler, reader); on one P a hand-off is a run-queue
// push instead of waking another OS thread. BenchmarkHookProcessors
// measures it: about 18 % off every decision on a 2-vCPU VM. Blocking
// I/O, subprocesses and concurrent calls still overlap; only CPU-bound
// work is serialized.
func ServeOnOneProcessor() {
	if _, set := os.LookupEnv("GOMAXPROCS"); !set {
		runtime.GOMAXPROCS(1)
	}
}
