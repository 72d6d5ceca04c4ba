package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
)

// Elicitation actions (the MCP wire values).
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
	ActionCancel  = "cancel"
)

// Elicit answers a server-initiated elicitation/create that arrived during
// one of the server's calls, through a, the session of that call (nil:
// Options.Asker). Policy never and "nobody to ask" decline (the server
// then knows no human will answer); otherwise the Asker answers.
// On an accepted form, fields the user left out get the schema's defaults
// ([FillDefaults]).
//
// Errors from the Asker other than [ErrNobodyToAsk] are returned wrapped;
// with a cancelled ctx they wrap ctx.Err().
func (p *Procedure) Elicit(ctx context.Context, a Asker, server string, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	log := p.log.With("server", server)
	if a == nil {
		a = p.asker
	}
	switch {
	case params == nil:
		log.Debug("declined elicitation without parameters")
		return &mcp.ElicitResult{Action: ActionDecline}, nil
	case p.approval.Policy == config.PolicyNever:
		log.Debug("declined elicitation: approval policy is never")
		return &mcp.ElicitResult{Action: ActionDecline}, nil
	case a == nil:
		log.Debug("declined elicitation: nobody to ask")
		return &mcp.ElicitResult{Action: ActionDecline}, nil
	}
	res, err := a.Elicit(ctx, Elicitation{Server: server, Params: params})
	if errors.Is(err, ErrNobodyToAsk) {
		log.Debug("declined elicitation", "reason", err)
		return &mcp.ElicitResult{Action: ActionDecline}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("elicit input for server %q: %w", server, err)
	}
	if res == nil {
		return &mcp.ElicitResult{Action: ActionCancel}, nil
	}
	out := *res
	if out.Action == ActionAccept && isForm(params) {
		out.Content = FillDefaults(params.RequestedSchema, out.Content)
	}
	log.Debug("elicitation answered", "action", out.Action)
	return &out, nil
}

func isForm(params *mcp.ElicitParams) bool {
	if params.Mode != "" {
		return params.Mode == "form"
	}
	return params.URL == "" && params.ElicitationID == ""
}

// FillDefaults returns content with every property the user left out set
// to the schema's default, when the schema has one. schema is a requested
// elicitation schema: a map[string]any, raw JSON (json.RawMessage or
// []byte) or any value that marshals to a JSON schema. content is never
// modified; when nothing needs adding, content itself is returned.
func FillDefaults(schema any, content map[string]any) map[string]any {
	out := content
	copied := false
	for name, prop := range schemaProperties(schema) {
		def, ok := prop["default"]
		if !ok || def == nil {
			continue
		}
		if _, present := content[name]; present {
			continue
		}
		if !copied {
			out = maps.Clone(content)
			if out == nil {
				out = make(map[string]any)
			}
			copied = true
		}
		out[name] = def
	}
	return out
}

// schemaProperties returns the "properties" object of a schema, each
// property as a decoded JSON object. Anything unreadable yields nil: a
// default is a convenience, never worth failing an answered form for.
func schemaProperties(schema any) map[string]map[string]any {
	var m map[string]any
	switch s := schema.(type) {
	case nil:
		return nil
	case map[string]any:
		m = s
	default:
		var raw []byte
		switch s := schema.(type) {
		case json.RawMessage:
			raw = s
		case []byte:
			raw = s
		default:
			b, err := json.Marshal(schema)
			if err != nil {
				return nil
			}
			raw = b
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil
		}
	}
	props, _ := m["properties"].(map[string]any)
	out := make(map[string]map[string]any, len(props))
	for name, v := range props {
		if prop, ok := v.(map[string]any); ok {
			out[name] = prop
		}
	}
	return out
}
