package gateway

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/events"
)

// NameError returns the *NameError of the current catalog (errors.Is
// ErrToolName) when its configuration gives two tools one upstream name
// or a name MCP does not allow, and nil otherwise. toolgate serve checks
// it once every server finished starting: New only saw the servers
// that were ready then.
func (g *Gateway) NameError() error {
	return g.planFor(g.host.NewStep("")).err
}

// reportStartupFailure tells every upstream session, as a log message,
// that a server failed to start: its tools are missing from the list
// the client has, and nothing else would say why. The tool list itself
// does not change, so go-sdk sends no list_changed for it; the server's
// tools arrive with one when a retry (retry_startup) succeeds. It runs
// on the event bus and must not block: notice only queues.
func (g *Gateway) reportStartupFailure(e events.Event) {
	ev, ok := e.(events.ServerStartup)
	if !ok || ev.Status != events.StatusFailed {
		return
	}
	p := &mcp.LoggingMessageParams{Level: "error", Logger: "toolgate", Data: fmt.Sprintf(
		"MCP server %q failed to start, so its tools are not listed: %s. toolgate retries it with backoff unless its block sets retry_startup = false; "+
			"its tools are added (notifications/tools/list_changed) once it is ready. `toolgate servers` shows its state.",
		ev.Server, ev.Error)}
	for _, s := range g.snapshot() {
		s.notice(p)
	}
}
