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
	// MaxListItems is how many resources, resource templates or prompts
	// of one server are kept; each kind is bounded on its own.
	MaxListItems = 10000
	// MaxPages bounds one listing; with the repeated-cursor check it
	// stops a server that paginates for ever.
	MaxPages       = 1000
	MaxCursorBytes = 64 << 10
)

// ErrCatalogLimit is matched by the List* errors when a server's listing
// breaks a limit (too many pages, an oversized or repeated cursor, or
// more items than kept: see [TooManyToolsError] and [TooManyItemsError]).
var ErrCatalogLimit = errors.New("catalog limit exceeded")

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

// TooManyItemsError is what ListResources, ListResourceTemplates and
// ListPrompts return, with the first Kept items, when a server lists more
// than MaxListItems of a kind. It matches ErrCatalogLimit.
type TooManyItemsError struct {
	// What is "resources", "resource templates" or "prompts".
	What string
	Kept int
}

func (e *TooManyItemsError) Error() string {
	return fmt.Sprintf("the server lists more than %d %s; only the first %d are kept. Filter them in its server block", e.Kept, e.What, e.Kept)
}

func (e *TooManyItemsError) Is(target error) bool { return target == ErrCatalogLimit }

// listAll follows one listing's pagination within the limits: at most
// MaxPages pages, cursors of at most MaxCursorBytes, never the same cursor
// twice, and at most limit items. Past limit it returns the first limit
// items and a *TooManyItemsError; any other error comes with no items.
// fetch asks for the page at cursor ("" first).
func listAll[T any](ctx context.Context, c *Client, what string, limit int,
	fetch func(ctx context.Context, s *mcp.ClientSession, cursor string) ([]T, string, error),
) ([]T, error) {
	var (
		items  []T
		seen   = map[string]bool{}
		cursor string
	)
	for page := 1; ; page++ {
		var got []T
		var next string
		err := c.run(ctx, func(s *mcp.ClientSession) (err error) {
			got, next, err = fetch(ctx, s, cursor)
			return err
		})
		if err != nil {
			return nil, c.secrets.redactError(fmt.Errorf("listing %s: %w", what, specificError(err)))
		}
		items = append(items, got...)
		if len(items) > limit {
			return items[:limit:limit], &TooManyItemsError{What: what, Kept: limit}
		}
		switch {
		case next == "":
			return items, nil
		case page >= MaxPages:
			return nil, fmt.Errorf("listing %s: %w: more than %d pages", what, ErrCatalogLimit, MaxPages)
		case len(next) > MaxCursorBytes:
			return nil, fmt.Errorf("listing %s: %w: cursor of %d bytes (limit %d)", what, ErrCatalogLimit, len(next), MaxCursorBytes)
		case seen[next]:
			return nil, fmt.Errorf("listing %s: %w: the server repeated cursor %.40q", what, ErrCatalogLimit, next)
		}
		seen[next] = true
		cursor = next
	}
}

// ListTools lists every tool, following pagination within the limits.
// Past Options.MaxTools it stops and returns the first MaxTools tools
// together with a [*TooManyToolsError]; any other error comes with no
// tools.
func (c *Client) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	maxTools := c.opts.MaxTools
	if maxTools <= 0 {
		maxTools = DefaultMaxTools
	}
	named := map[string]bool{} // tool names
	tools, err := listAll(ctx, c, "tools", maxTools, func(ctx context.Context, s *mcp.ClientSession, cursor string) ([]*mcp.Tool, string, error) {
		res, err := s.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		for _, t := range res.Tools {
			if named[t.Name] {
				// Both are kept, as before; the model sees them under
				// distinct names, but the server cannot tell them apart.
				c.log.Warn("the server lists two tools with the same name; calls to either reach whichever the server picks",
					"tool", fmt.Sprintf("%q", t.Name))
			}
			named[t.Name] = true
			if cut := capTool(t, c.opts.MaxDescriptionBytes, c.opts.MaxSchemaBytes); len(cut) > 0 {
				c.log.Warn("cutting a tool the server lists down to size; raise max_description_bytes or max_schema_bytes in its server block if it is legitimate",
					"tool", fmt.Sprintf("%q", t.Name), "cut", cut)
			}
		}
		return res.Tools, res.NextCursor, nil
	})
	var tooMany *TooManyItemsError
	if errors.As(err, &tooMany) {
		return tools, &TooManyToolsError{Kept: tooMany.Kept}
	}
	return tools, err
}
