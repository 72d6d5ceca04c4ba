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
	// DefaultMaxTools is how many tools of one server are kept when
	// Options.MaxTools is 0. tool_search stays well under a millisecond a
	// query at this size.
	DefaultMaxTools = 10000
	// MaxPages bounds one listing; with the repeated-cursor check it
	// stops a server that paginates for ever.
	MaxPages       = 1000
	MaxCursorBytes = 64 << 10
)

// ErrCatalogLimit is matched by ListTools errors when a server's listing
// breaks a limit (too many pages, an oversized or repeated cursor, or
// more tools than kept: see [TooManyToolsError]).
var ErrCatalogLimit = errors.New("tool catalog limit exceeded")

// TooManyToolsError is what ListTools returns, with the first Kept tools,
// when a server lists more tools than the client keeps (Options.MaxTools):
// the server is usable, degraded, rather than failed. It matches
// ErrCatalogLimit.
type TooManyToolsError struct {
	Kept int
}

func (e *TooManyToolsError) Error() string {
	return fmt.Sprintf("the server lists more than %d tools; only the first %d are kept. Raise max_tools in its server block, or filter its tools with enabled_tools", e.Kept, e.Kept)
}

func (e *TooManyToolsError) Is(target error) bool { return target == ErrCatalogLimit }

// ListTools lists every tool, following pagination within the limits.
// Past Options.MaxTools it stops and returns the first MaxTools tools
// together with a [*TooManyToolsError]; any other error comes with no
// tools.
func (c *Client) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	maxTools := c.opts.MaxTools
	if maxTools <= 0 {
		maxTools = DefaultMaxTools
	}
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
		if len(tools) > maxTools {
			return tools[:maxTools:maxTools], &TooManyToolsError{Kept: maxTools}
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
