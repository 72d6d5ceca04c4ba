package gateway

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxToolsListPageBytes caps one tools/list page toolgate serves: the
// tools of a page past it go to the next page. Each tool is already cut
// to its server's max_description_bytes and max_schema_bytes, so a page
// holds dozens of even the largest tools; a client's context is not
// flooded by one answer.
const MaxToolsListPageBytes = 4 << 20

// pageCursorPrefix marks a cursor toolgate made: "tg-page:SKIP:INNER"
// means "the go-sdk page at cursor INNER, from its SKIPth tool on".
const pageCursorPrefix = "tg-page:"

// capToolsListPage splits a tools/list page whose encoded tools exceed
// limit bytes: the first tools that fit (at least one) are answered, and
// the cursor it returns leads to the rest of the same go-sdk page. It
// changes nothing for pages within the limit.
func capToolsListPage(limit int) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			r, ok := req.(*mcp.ListToolsRequest)
			if method != "tools/list" || !ok {
				return next(ctx, method, req)
			}
			skip := 0
			if r.Params != nil && strings.HasPrefix(r.Params.Cursor, pageCursorPrefix) {
				n, inner, ok := strings.Cut(strings.TrimPrefix(r.Params.Cursor, pageCursorPrefix), ":")
				skip, _ = strconv.Atoi(n)
				if !ok || skip <= 0 {
					skip = 0
				}
				params := *r.Params
				params.Cursor = inner
				req = &mcp.ListToolsRequest{Session: r.Session, Params: &params, Extra: r.Extra}
				r = req.(*mcp.ListToolsRequest)
			}
			res, err := next(ctx, method, req)
			list, ok := res.(*mcp.ListToolsResult)
			if err != nil || !ok {
				return res, err
			}
			innerCursor := ""
			if r.Params != nil {
				innerCursor = r.Params.Cursor
			}
			tools := list.Tools[min(skip, len(list.Tools)):]
			size, fit := 0, 0
			for _, t := range tools {
				b, err := json.Marshal(t)
				if err != nil {
					break
				}
				if fit > 0 && size+len(b) > limit {
					break
				}
				size += len(b)
				fit++
			}
			out := *list
			out.Tools = tools[:fit]
			if fit < len(tools) {
				out.NextCursor = pageCursorPrefix + strconv.Itoa(skip+fit) + ":" + innerCursor
			}
			return &out, nil
		}
	}
}
