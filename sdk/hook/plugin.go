package hook

import (
	"context"
	"errors"
	"slices"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/internal/pb/hookv1"
	"github.com/toolgate/toolgate/sdk/internal/pb/pluginv1"
	"github.com/toolgate/toolgate/sdk/internal/wire"
)

// PluginName is the name a hook is served and dispensed under.
const PluginName = "hook"

// Serve runs impl as a toolgate hook plugin until the host stops it. Call
// it from main, and write nothing to stdout before: the first line on
// stdout is go-plugin's handshake.
func Serve(impl Hook) {
	plugin.Serve(ServeConfig(impl))
}

// ServeConfig is the go-plugin configuration [Serve] uses, for plugins that
// need to adjust it (tests of version negotiation, mostly).
func ServeConfig(impl Hook) *plugin.ServeConfig {
	log := sdk.NewLogger("")
	return wire.ServeConfig(plugin.PluginSet{PluginName: &GRPCPlugin{Impl: impl, Logger: log}}, log)
}

// VersionedPlugins is the plugin set of the hook protocol, for
// plugin.ClientConfig.VersionedPlugins on the host (impl nil) and for
// plugin.ServeConfig in the plugin.
func VersionedPlugins(impl Hook) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{sdk.ProtocolVersion: {PluginName: &GRPCPlugin{Impl: impl}}}
}

// GRPCPlugin is the go-plugin glue of a hook: GRPCServer serves Impl in the
// plugin, GRPCClient returns a [*Client] in the host.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin

	// Impl is the hook served; plugin side only.
	Impl Hook
	// Logger receives panics of Impl (the call fails, the plugin survives);
	// plugin side only. Nil discards them.
	Logger hclog.Logger
	// APIVersions overrides the API versions the plugin reports; nil means
	// [sdk.APIVersion]. For tests of version negotiation.
	APIVersions []string
}

var (
	_ plugin.GRPCPlugin = (*GRPCPlugin)(nil)
	_ Hook              = (*Client)(nil)
	_ ResourceReadHook  = (*Client)(nil)
	_ PromptGetHook     = (*Client)(nil)
	_ Hook              = Base{}
)

// GRPCServer registers the hook's services on s.
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Impl == nil {
		return errors.New("serving hook: GRPCPlugin.Impl is nil; pass the hook implementation")
	}
	pluginv1.RegisterPluginServiceServer(s, &wire.PluginServer{
		Kind:         sdk.KindHook,
		Impl:         p.Impl,
		Capabilities: capabilities(p.Impl),
		APIVersions:  p.APIVersions,
		Logger:       p.Logger,
	})
	hookv1.RegisterHookServiceServer(s, &server{impl: p.Impl, log: p.Logger})
	return nil
}

// GRPCClient returns the host's [*Client] of the plugin behind conn; exited
// is cancelled by go-plugin when the plugin process exits.
func (p *GRPCPlugin) GRPCClient(exited context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return NewClient(conn, exited), nil
}

// requestEvents are the events of the optional interfaces, each with the
// test of whether a hook implements it.
var requestEvents = []Event{EventPreResourceRead, EventPrePromptGet}

func implements(impl Hook, e Event) bool {
	switch e {
	case EventPreResourceRead:
		_, ok := impl.(ResourceReadHook)
		return ok
	case EventPrePromptGet:
		_, ok := impl.(PromptGetHook)
		return ok
	}
	return true
}

// capabilities are the events the hook declares in its Info: the ones it
// lists, or all it implements. A listed request event whose interface
// the hook does not implement is left out: the host would be told the
// hook decides what it cannot.
func capabilities(impl Hook) []string {
	events := AllEvents
	if l, ok := impl.(EventLister); ok {
		events = l.Events()
	} else {
		for _, e := range requestEvents {
			if implements(impl, e) {
				events = append(slices.Clip(events), e)
			}
		}
	}
	caps := make([]string, 0, len(events))
	for _, e := range events {
		if implements(impl, e) {
			caps = append(caps, string(e))
		}
	}
	return caps
}
