package terminal

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/pipeline"
)

// The Terminal is the Upstream of toolgate call's requests: it answers
// the approval question and a server's elicitations. The rest of the
// interface is what a terminal front end does not take.
var _ pipeline.Upstream = (*Terminal)(nil)

// errNoSampling answers a sampling request; the host offers sampling to
// servers only under toolgate serve, so none should arrive here.
var errNoSampling = errors.New("toolgate forwards sampling/createMessage only to the MCP client of toolgate serve, not to a terminal")

// Sample refuses: a terminal has no model to sample.
func (t *Terminal) Sample(context.Context, string, *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	return nil, errNoSampling
}

// Log drops the message: outside toolgate serve the host never forwards
// server log messages (they are in toolgate's log), and a terminal
// prompt is no place for them.
func (t *Terminal) Log(*mcp.LoggingMessageParams) {}

// Progress is nil: toolgate call shows no progress, so none is asked of
// the server.
func (t *Terminal) Progress() func(*mcp.ProgressNotificationParams) { return nil }
