package gateway

import "github.com/modelcontextprotocol/go-sdk/mcp"

// SessionsBuilt is how many sessions g has built (a go-sdk server and a
// step each), for tests that check what a request may cost.
func SessionsBuilt(g *Gateway) uint64 { return g.built.Load() }

// BroadcastLog is what the host hands the gateway for a server's log
// message sent outside any call (host.Listener.ServerLog).
func (g *Gateway) BroadcastLog(p *mcp.LoggingMessageParams) { g.broadcastLog(p) }
