package conformance

import (
	"context"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/approval"
)

// acceptWithDefaults answers every form elicitation with "accept" and the
// schema's defaults (the host's own approval.FillDefaults), standing in
// for a user who presses Submit without touching the form. URL-mode
// requests are declined: nobody is there to open the page.
func acceptWithDefaults(log hclog.Logger) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		p := req.Params
		if p.Mode == "url" || p.URL != "" {
			log.Info("declining URL elicitation", "message", p.Message)
			return &mcp.ElicitResult{Action: approval.ActionDecline}, nil
		}
		content := approval.FillDefaults(p.RequestedSchema, map[string]any{})
		log.Info("accepting elicitation with defaults", "message", p.Message, "fields", len(content))
		return &mcp.ElicitResult{Action: approval.ActionAccept, Content: content}, nil
	}
}
