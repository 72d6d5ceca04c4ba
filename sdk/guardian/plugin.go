package guardian

import (
	"context"
	"errors"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/internal/pb/guardianv1"
	"github.com/toolgate/toolgate/sdk/internal/pb/pluginv1"
	"github.com/toolgate/toolgate/sdk/internal/wire"
)

// PluginName is the name a Guardian is served and dispensed under.
const PluginName = "guardian"

// CapabilityReview is the capability every Guardian lists.
const CapabilityReview = "review"

// Serve runs impl as a toolgate Guardian plugin until the host stops it.
// Call it from main, and write nothing to stdout before: the first line on
// stdout is go-plugin's handshake.
func Serve(impl Reviewer) {
	plugin.Serve(ServeConfig(impl))
}

// ServeConfig is the go-plugin configuration [Serve] uses.
func ServeConfig(impl Reviewer) *plugin.ServeConfig {
	log := sdk.NewLogger("")
	return wire.ServeConfig(plugin.PluginSet{PluginName: &GRPCPlugin{Impl: impl, Logger: log}}, log)
}

// VersionedPlugins is the plugin set of the Guardian protocol, for
// plugin.ClientConfig.VersionedPlugins on the host (impl nil) and for
// plugin.ServeConfig in the plugin.
func VersionedPlugins(impl Reviewer) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{sdk.ProtocolVersion: {PluginName: &GRPCPlugin{Impl: impl}}}
}

// GRPCPlugin is the go-plugin glue of a Guardian: GRPCServer serves Impl in
// the plugin, GRPCClient returns a [*Client] in the host.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin

	// Impl is the Guardian served; plugin side only.
	Impl Reviewer
	// Logger receives panics of Impl; plugin side only. Nil discards them.
	Logger hclog.Logger
	// APIVersions overrides the API versions the plugin reports; nil means
	// [sdk.APIVersion].
	APIVersions []string
}

var (
	_ plugin.GRPCPlugin = (*GRPCPlugin)(nil)
	_ Reviewer          = (*Client)(nil)
)

// GRPCServer registers the Guardian's services on s.
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Impl == nil {
		return errors.New("serving guardian: GRPCPlugin.Impl is nil; pass the reviewer implementation")
	}
	pluginv1.RegisterPluginServiceServer(s, &wire.PluginServer{
		Kind:         sdk.KindGuardian,
		Impl:         p.Impl,
		Capabilities: []string{CapabilityReview},
		APIVersions:  p.APIVersions,
		Logger:       p.Logger,
	})
	guardianv1.RegisterGuardianServiceServer(s, &server{impl: p.Impl, log: p.Logger})
	return nil
}

// GRPCClient returns the host's [*Client] of the plugin behind conn; exited
// is cancelled by go-plugin when the plugin process exits.
func (p *GRPCPlugin) GRPCClient(exited context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return NewClient(conn, exited), nil
}
