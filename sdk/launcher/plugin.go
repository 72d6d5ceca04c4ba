package launcher

import (
	"context"
	"errors"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/toolgate/toolgate/internal/contain"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/internal/pb/launcherv1"
	"github.com/toolgate/toolgate/sdk/internal/pb/pluginv1"
	"github.com/toolgate/toolgate/sdk/internal/wire"
)

// PluginName is the name a launcher is served and dispensed under.
const PluginName = "launcher"

// CapabilityLaunch is the capability every launcher lists.
const CapabilityLaunch = "launch"

// Serve runs impl as a toolgate launcher plugin until the host stops it.
// Call it from main, and write nothing to stdout before: the first line on
// stdout is go-plugin's handshake.
func Serve(impl Launcher) {
	RunSupervisorIfAsked()
	plugin.Serve(ServeConfig(impl))
}

// RunSupervisorIfAsked is the entry point of the supervisor that ends the
// processes [StartCommand] started if the plugin is killed (Linux, macOS;
// Windows needs none). [Serve] calls it first; a plugin that serves
// through [ServeConfig] calls it first thing in main. When the process
// was started as that supervisor it does the job and exits; otherwise it
// returns at once. Nothing in this package runs before main: a binary
// that does not call it has no supervisor.
func RunSupervisorIfAsked() { contain.RunSupervisorIfAsked() }

// ServeConfig is the go-plugin configuration [Serve] uses.
func ServeConfig(impl Launcher) *plugin.ServeConfig {
	log := sdk.NewLogger("")
	return wire.ServeConfig(plugin.PluginSet{PluginName: &GRPCPlugin{Impl: impl, Logger: log}}, log)
}

// VersionedPlugins is the plugin set of the launcher protocol, for
// plugin.ClientConfig.VersionedPlugins on the host (impl nil; opts apply to
// the dispensed [*Client]) and for plugin.ServeConfig in the plugin.
func VersionedPlugins(impl Launcher, opts ClientOptions) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{sdk.ProtocolVersion: {PluginName: &GRPCPlugin{Impl: impl, ClientOptions: opts}}}
}

// GRPCPlugin is the go-plugin glue of a launcher: GRPCServer serves Impl in
// the plugin, GRPCClient returns a [*Client] in the host.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin

	// Impl is the launcher served; plugin side only.
	Impl Launcher
	// Logger receives the shim's diagnostics and panics of Impl; plugin
	// side only. Nil discards them.
	Logger hclog.Logger
	// APIVersions overrides the API versions the plugin reports; nil means
	// [sdk.APIVersion].
	APIVersions []string
	// ClientOptions configures the dispensed [*Client]; host side only.
	ClientOptions ClientOptions
}

var (
	_ plugin.GRPCPlugin = (*GRPCPlugin)(nil)
	_ Launcher          = (*Client)(nil)
	_ Process           = (*RemoteProcess)(nil)
)

// GRPCServer registers the launcher's services on s.
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Impl == nil {
		return errors.New("serving launcher: GRPCPlugin.Impl is nil; pass the launcher implementation")
	}
	log := p.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	capabilities := []string{CapabilityLaunch}
	if fdPassingSupported {
		capabilities = append(capabilities, CapabilityPassFDs)
	}
	pluginv1.RegisterPluginServiceServer(s, &wire.PluginServer{
		Kind:         sdk.KindLauncher,
		Impl:         p.Impl,
		Capabilities: capabilities,
		APIVersions:  p.APIVersions,
		Logger:       log,
	})
	launcherv1.RegisterLauncherServiceServer(s, &server{impl: p.Impl, log: log})
	return nil
}

// GRPCClient returns the host's [*Client] of the plugin behind conn; exited
// is cancelled by go-plugin when the plugin process exits.
func (p *GRPCPlugin) GRPCClient(exited context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return NewClient(conn, exited, p.ClientOptions), nil
}
