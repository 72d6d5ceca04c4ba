package mcpclient

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Catalog limits per server. A server past them is broken or hostile; the
// host refuses its list rather than growing without bound.
const (
	MaxTools       = 2048
	MaxPages       = 100
	MaxCursorBytes = 64 << 10
)

// ErrCatalogLimit is matched by ListTools errors when a server's listing
// breaks a limit (too many tools or pages, an oversized or repeated
// cursor). The server must be fixed or its tools filtered server-side.
var ErrCatalogLimit = errors.New("tool catalog limit exceeded")

// ListTools lists every tool, following pagination within the limits.
func (c *Client) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	var (
		tools []*mcp.Tool
		seen  = map[string]bool{} // cursors
		named = map[string]bool{} // tool names
		param = &mcp.ListToolsParams{}
	)
	for page := 1; ; page++ {
		var res *mcp.ListToolsResult
		err := c.run(ctx, func(s *mcp.ClientSession) (err error) {
			res, err = s.ListTools(ctx, param)
			return err
		})
		if err != nil {
			return nil, c.secrets.redactError(fmt.Errorf("listing tools: %w", specificError(err)))
		}
		for _, t := range res.Tools {
			if named[t.Name] {
				// Both are kept, as before; the model sees them under
				// distinct names, but the server cannot tell them apart.
				c.log.Warn("the server lists two tools with the same name; calls to either reach whichever the server picks",
					"tool", fmt.Sprintf("%q", t.Name))
			}
			named[t.Name] = true
		}
		tools = append(tools, res.Tools...)
		if len(tools) > MaxTools {
			return nil, fmt.Errorf("listing tools: %w: more than %d tools", ErrCatalogLimit, MaxTools)
		}
		next := res.NextCursor
		switch {
		case next == "":
			return tools, nil
		case page >= MaxPages:
			return nil, fmt.Errorf("listing tools: %w: more than %d pages", ErrCatalogLimit, MaxPages)
		case len(next) > MaxCursorBytes:
			return nil, fmt.Errorf("listing tools: %w: cursor of %d bytes (limit %d)", ErrCatalogLimit, len(next), MaxCursorBytes)
		case seen[next]:
			return nil, fmt.Errorf("listing tools: %w: the server repeated cursor %.40q", ErrCatalogLimit, next)
		}
		seen[next] = true
		param = &mcp.ListToolsParams{Cursor: next}
	}
}
