package mcpdemo

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// repeatedCursor is the nextCursor a --repeat-cursor server returns forever.
const repeatedCursor = "mcp-demo-repeat"

// Method names go-sdk keeps unexported.
const (
	methodInitialize = "initialize"
	methodDiscover   = "server/discover"
	methodListTools  = "tools/list"
	methodCallTool   = "tools/call"
)

// receivingMiddleware is registered after go-sdk's own multi-round-trip
// middleware, so it wraps it: a legacy elicitation that re-runs the tool
// handler is still one tools/call here.
func (d *Demo) receivingMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if d.cfg.StderrNoise {
			d.stderr.printf("mcp-demo: noise: received %s", method)
		}
		switch method {
		case methodInitialize, methodDiscover:
			if d.cfg.FailInitialize {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: failInitializeMessage}
			}
		case methodListTools:
			if d.cfg.RepeatCursor {
				return d.listToolsRepeatingCursor(ctx, method, req, next)
			}
			if d.cfg.EndlessPages {
				return d.listToolsEndlessly(ctx, method, req, next)
			}
		case "resources/list":
			if d.cfg.RepeatCursor {
				return d.listResourcesRepeatingCursor(ctx, method, req, next)
			}
		case methodCallTool:
			return d.callTool(ctx, method, req, next)
		case "notifications/cancelled":
			// Logged as it arrives, before any later message (stdin's EOF)
			// is read, so the log has it even when the process ends next.
			entry := callLogEntry{Event: "cancel_notification"}
			if p, ok := req.GetParams().(*mcp.CancelledParams); ok && p != nil {
				entry.RequestID = p.RequestID
			}
			d.logCall(entry)
		case "resources/read", "resources/subscribe", "prompts/get", "completion/complete":
			d.logRequest(method, req)
		}
		return next(ctx, method, req)
	}
}

// listToolsRepeatingCursor serves the first page for every cursor and always
// points at a next page, like a server whose cursor never advances.
func (d *Demo) listToolsRepeatingCursor(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	if r, ok := req.(*mcp.ListToolsRequest); ok && r.Params != nil {
		// The repeated cursor is not a go-sdk cursor; hand go-sdk a first-page request.
		params := *r.Params
		params.Cursor = ""
		req = &mcp.ListToolsRequest{Session: r.Session, Params: &params, Extra: r.Extra}
	}
	res, err := next(ctx, method, req)
	if err != nil {
		return res, err
	}
	if list, ok := res.(*mcp.ListToolsResult); ok {
		list.NextCursor = repeatedCursor
	}
	return res, nil
}

// endlessCursor prefixes the page number of an --endless-pages cursor.
const endlessCursor = "mcp-demo-endless-"

// listToolsEndlessly serves the real first page, then one made-up tool per
// page with a cursor to the next page, for ever: a server whose
// pagination never ends but never repeats a cursor either.
func (d *Demo) listToolsEndlessly(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	cursor := ""
	if r, ok := req.(*mcp.ListToolsRequest); ok && r.Params != nil {
		cursor = r.Params.Cursor
	}
	if cursor == "" {
		res, err := next(ctx, method, req)
		if list, ok := res.(*mcp.ListToolsResult); ok && err == nil {
			list.NextCursor = endlessCursor + "1"
		}
		return res, err
	}
	n, err := strconv.Atoi(strings.TrimPrefix(cursor, endlessCursor))
	if err != nil || !strings.HasPrefix(cursor, endlessCursor) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown cursor %q", cursor)}
	}
	return &mcp.ListToolsResult{
		Tools: []*mcp.Tool{{
			Name:        fmt.Sprintf("endless_%d", n),
			Description: fmt.Sprintf("page %d of a listing that never ends", n),
			InputSchema: map[string]any{"type": "object"},
		}},
		NextCursor: endlessCursor + strconv.Itoa(n+1),
	}, nil
}

// listResourcesRepeatingCursor is listToolsRepeatingCursor for
// resources/list.
func (d *Demo) listResourcesRepeatingCursor(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	if r, ok := req.(*mcp.ListResourcesRequest); ok && r.Params != nil {
		params := *r.Params
		params.Cursor = ""
		req = &mcp.ListResourcesRequest{Session: r.Session, Params: &params, Extra: r.Extra}
	}
	res, err := next(ctx, method, req)
	if err != nil {
		return res, err
	}
	if list, ok := res.(*mcp.ListResourcesResult); ok {
		list.NextCursor = repeatedCursor
	}
	return res, nil
}

type callLogEntry struct {
	Event     string          `json:"event"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Meta      map[string]any  `json:"meta,omitempty"`
	RequestID any             `json:"request_id,omitempty"`
	PID       int             `json:"pid"`
}

func (d *Demo) callTool(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	r, ok := req.(*mcp.CallToolRequest)
	if !ok || r.Params == nil {
		return next(ctx, method, req)
	}
	name := r.Params.Name
	d.logCall(callLogEntry{Event: "call", Tool: name, Arguments: r.Params.Arguments, Meta: r.Params.Meta})
	if d.cfg.LogMessages && r.Session != nil {
		// go-sdk drops this unless the client chose a log level.
		_ = r.Session.Log(ctx, &mcp.LoggingMessageParams{
			Level:  "info",
			Logger: d.cfg.Name,
			Data:   map[string]any{"tool": name, "message": "tools/call " + name},
		})
	}
	res, err := next(ctx, method, req)
	if ctx.Err() != nil {
		d.logCall(callLogEntry{Event: "cancelled", Tool: name})
	}
	return res, err
}

// logRequest records a request other than a tool call in the call log
// as {"event":"request","tool":"<method> <uri or name>"}, so tests can
// tell what reached the server.
func (d *Demo) logRequest(method string, req mcp.Request) {
	target := ""
	switch r := req.(type) {
	case *mcp.ReadResourceRequest:
		target = r.Params.URI
	case *mcp.SubscribeRequest:
		target = r.Params.URI
	case *mcp.GetPromptRequest:
		target = r.Params.Name
	case *mcp.CompleteRequest:
		if r.Params.Ref != nil {
			target = r.Params.Ref.Name + r.Params.Ref.URI
		}
	}
	d.logCall(callLogEntry{Event: "request", Tool: method + " " + target})
}

func (d *Demo) logCall(e callLogEntry) {
	if d.callLog == nil {
		return
	}
	e.PID = os.Getpid()
	line, err := json.Marshal(e)
	if err != nil {
		// Arguments arrive as raw JSON from the wire and are valid, so this
		// only trips on a bug; keep the line so the log stays one-per-call.
		line, _ = json.Marshal(callLogEntry{Event: e.Event, Tool: e.Tool, PID: e.PID})
	}
	d.callLog.writeLine(line)
}
