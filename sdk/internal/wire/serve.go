package wire

import (
	"math"

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

// FlowControlWindow is the fixed gRPC flow-control window (per stream and
// per connection) a plugin receives with; [DialOptions] gives a host in
// sdk/ the same for what it receives. A fixed window turns off gRPC's
// bandwidth-delay probing, which otherwise adds a PING round trip to many
// small messages (the launcher's MCP lines) and can grow windows to
// 16 MiB; 1 MiB bounds what one stream buffers. Each side's window only
// governs what that side receives, so a host that dials without it (one
// written in another language, say) still works.
const FlowControlWindow = 1 << 20

// NewGRPCServer is the gRPC server a plugin serves on. Requests may carry
// large tool arguments, so the receive limit matches the one go-plugin sets
// on the host side instead of gRPC's 4 MiB default.
func NewGRPCServer(opts []grpc.ServerOption) *grpc.Server {
	opts = append(opts,
		grpc.MaxRecvMsgSize(math.MaxInt32),
		grpc.InitialWindowSize(FlowControlWindow),
		grpc.InitialConnWindowSize(FlowControlWindow),
	)
	return grpc.NewServer(opts...)
}

// DialOptions are the dial options of the SDK's own host-side code
// (plugintest, benchmarks): the fixed [FlowControlWindow] for what the
// host receives.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithInitialWindowSize(FlowControlWindow),
		grpc.WithInitialConnWindowSize(FlowControlWindow),
	}
}
