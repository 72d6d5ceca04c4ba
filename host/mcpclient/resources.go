package mcpclient

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ListResources lists every resource, paginated within the limits of
// listAll; nil entries and entries without a URI are left out.
func (c *Client) ListResources(ctx context.Context) ([]*mcp.Resource, error) {
	return listAll(ctx, c, "resources", MaxListItems, func(ctx context.Context, s *mcp.ClientSession, cursor string) ([]*mcp.Resource, string, error) {
		res, err := s.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		out := res.Resources[:0:0]
		for _, r := range res.Resources {
			if r != nil && r.URI != "" {
				out = append(out, r)
			}
		}
		return out, res.NextCursor, nil
	})
}

// ListResourceTemplates lists every resource template, like ListResources.
func (c *Client) ListResourceTemplates(ctx context.Context) ([]*mcp.ResourceTemplate, error) {
	return listAll(ctx, c, "resource templates", MaxListItems, func(ctx context.Context, s *mcp.ClientSession, cursor string) ([]*mcp.ResourceTemplate, string, error) {
		res, err := s.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		out := res.ResourceTemplates[:0:0]
		for _, t := range res.ResourceTemplates {
			if t != nil && t.URITemplate != "" {
				out = append(out, t)
			}
		}
		return out, res.NextCursor, nil
	})
}

// ListPrompts lists every prompt, like ListResources.
func (c *Client) ListPrompts(ctx context.Context) ([]*mcp.Prompt, error) {
	return listAll(ctx, c, "prompts", MaxListItems, func(ctx context.Context, s *mcp.ClientSession, cursor string) ([]*mcp.Prompt, string, error) {
		res, err := s.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		out := res.Prompts[:0:0]
		for _, p := range res.Prompts {
			if p != nil && p.Name != "" {
				out = append(out, p)
			}
		}
		return out, res.NextCursor, nil
	})
}

// ReadResource sends resources/read for uri.
func (c *Client) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	var res *mcp.ReadResourceResult
	err := c.run(ctx, func(s *mcp.ClientSession) (err error) {
		res, err = s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		return err
	})
	if err != nil {
		return nil, c.secrets.redactError(fmt.Errorf("reading resource %.200q: %w", uri, specificError(err)))
	}
	return res, nil
}

// GetPrompt sends prompts/get.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	var res *mcp.GetPromptResult
	err := c.run(ctx, func(s *mcp.ClientSession) (err error) {
		res, err = s.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
		return err
	})
	if err != nil {
		return nil, c.secrets.redactError(fmt.Errorf("getting prompt %q: %w", name, specificError(err)))
	}
	return res, nil
}

// Complete sends completion/complete. params is not modified.
func (c *Client) Complete(ctx context.Context, params *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	var res *mcp.CompleteResult
	err := c.run(ctx, func(s *mcp.ClientSession) (err error) {
		res, err = s.Complete(ctx, params)
		return err
	})
	if err != nil {
		return nil, c.secrets.redactError(fmt.Errorf("completing: %w", specificError(err)))
	}
	return res, nil
}

// Subscribe sends resources/subscribe for uri; updates arrive at
// Handlers.ResourceUpdated.
func (c *Client) Subscribe(ctx context.Context, uri string) error {
	err := c.run(ctx, func(s *mcp.ClientSession) error {
		return s.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
	})
	if err != nil {
		return c.secrets.redactError(fmt.Errorf("subscribing to resource %.200q: %w", uri, specificError(err)))
	}
	return nil
}

// Unsubscribe sends resources/unsubscribe for uri.
func (c *Client) Unsubscribe(ctx context.Context, uri string) error {
	err := c.run(ctx, func(s *mcp.ClientSession) error {
		return s.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	})
	if err != nil {
		return c.secrets.redactError(fmt.Errorf("unsubscribing from resource %.200q: %w", uri, specificError(err)))
	}
	return nil
}
