package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"google.golang.org/grpc"

	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/internal/pb/hookv1"
	"github.com/toolgate/toolgate/sdk/internal/wire"
)

// Client is the host's handle on a hook plugin. It implements [Hook]; its
// errors match sdk.ErrPluginExited, sdk.ErrPluginUnavailable,
// sdk.ErrBadResponse, sdk.ErrNotConfigured, context.DeadlineExceeded and
// context.Canceled, or are a *sdk.PluginError.
//
// After a successful [Client.Info], event methods for events the plugin
// did not list return the "no opinion" result without calling it.
//
// A Client is safe for concurrent use.
type Client struct {
	rpc    hookv1.HookServiceClient
	plugin wire.PluginClient
	exited context.Context

	mu     sync.Mutex
	events []Event // from the last successful Info; nil before
}

// NewClient returns a client of the hook served on conn. exited must be
// cancelled when the plugin process exits (go-plugin's GRPCClient context);
// nil means there is no process to watch.
func NewClient(conn grpc.ClientConnInterface, exited context.Context) *Client {
	if exited == nil {
		exited = context.Background()
	}
	pc := wire.NewPluginClient(conn, exited, sdk.KindHook)
	return &Client{
		rpc:    hookv1.NewHookServiceClient(conn),
		plugin: pc,
		exited: exited,
	}
}

// Exited is closed when the plugin process has exited.
func (c *Client) Exited() <-chan struct{} { return c.exited.Done() }

// Info describes the plugin, and remembers which events it handles.
func (c *Client) Info(ctx context.Context) (sdk.Info, error) {
	info, err := c.plugin.Info(ctx)
	if err != nil {
		return sdk.Info{}, err
	}
	var events []Event
	for _, e := range slices.Concat(AllEvents, requestEvents) {
		if info.Has(string(e)) {
			events = append(events, e)
		}
	}
	c.mu.Lock()
	c.events = events
	if c.events == nil {
		c.events = []Event{}
	}
	c.mu.Unlock()
	return info, nil
}

// Configure sends the plugin its configuration (a JSON object shaped by
// the schema from Info) and returns the plugin's diagnostics. Diagnostics
// are not an error: check them with sdk.HasErrors.
func (c *Client) Configure(ctx context.Context, config json.RawMessage) ([]sdk.Diagnostic, error) {
	return c.plugin.Configure(ctx, config)
}

// Handles reports whether the plugin handles e: for the events of
// [AllEvents] true until Info has told otherwise; for the request events
// only once Info has listed them, since a plugin older than them would
// fail the call.
func (c *Client) Handles(e Event) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.events == nil {
		return !slices.Contains(requestEvents, e)
	}
	return slices.Contains(c.events, e)
}

// PreResourceRead asks the plugin whether a resource read may go on; a
// plugin that did not list EventPreResourceRead is not asked.
func (c *Client) PreResourceRead(ctx context.Context, req ResourceRequest) (PreToolUseResult, error) {
	if !c.Handles(EventPreResourceRead) {
		return Continue(), nil
	}
	resp, err := c.rpc.PreResourceRead(ctx, &hookv1.PreResourceReadRequest{Read: &hookv1.ResourceRead{
		Server: req.Server, Uri: req.URI, ModelUri: req.ClientURI, SessionId: req.SessionID, CallId: req.CallID,
		Cwd: req.Cwd, Caller: wire.CallerToPB(req.Caller),
	}})
	if err != nil {
		return PreToolUseResult{}, fmt.Errorf("calling hook PreResourceRead: %w", wire.FromRPC(ctx, err, c.exited))
	}
	switch a := resp.GetAction().(type) {
	case *hookv1.PreResourceReadResponse_ContinueRequest:
		return Continue(), nil
	case *hookv1.PreResourceReadResponse_Block:
		return Block(a.Block.GetReason()), nil
	}
	return PreToolUseResult{}, fmt.Errorf("calling hook PreResourceRead: %w", wire.BadResponse("no action (continue or block) set"))
}

// PrePromptGet asks the plugin whether a prompt get may go on; a plugin
// that did not list EventPrePromptGet is not asked.
func (c *Client) PrePromptGet(ctx context.Context, req PromptRequest) (PreToolUseResult, error) {
	if !c.Handles(EventPrePromptGet) {
		return Continue(), nil
	}
	resp, err := c.rpc.PrePromptGet(ctx, &hookv1.PrePromptGetRequest{Get: &hookv1.PromptGet{
		Server: req.Server, Prompt: req.Prompt, ModelName: req.ModelName, Arguments: req.Arguments,
		SessionId: req.SessionID, CallId: req.CallID, Cwd: req.Cwd, Caller: wire.CallerToPB(req.Caller),
	}})
	if err != nil {
		return PreToolUseResult{}, fmt.Errorf("calling hook PrePromptGet: %w", wire.FromRPC(ctx, err, c.exited))
	}
	switch a := resp.GetAction().(type) {
	case *hookv1.PrePromptGetResponse_ContinueRequest:
		return Continue(), nil
	case *hookv1.PrePromptGetResponse_Block:
		return Block(a.Block.GetReason()), nil
	}
	return PreToolUseResult{}, fmt.Errorf("calling hook PrePromptGet: %w", wire.BadResponse("no action (continue or block) set"))
}

// PreToolUse asks the plugin what to do with a proposed call.
func (c *Client) PreToolUse(ctx context.Context, req Request) (PreToolUseResult, error) {
	if !c.Handles(EventPreToolUse) {
		return Continue(), nil
	}
	resp, err := c.rpc.PreToolUse(ctx, &hookv1.PreToolUseRequest{Call: requestToPB(req)})
	if err != nil {
		return PreToolUseResult{}, fmt.Errorf("calling hook PreToolUse: %w", wire.FromRPC(ctx, err, c.exited))
	}
	res, err := preToolUseFromPB(resp)
	if err != nil {
		return PreToolUseResult{}, fmt.Errorf("calling hook PreToolUse: %w", err)
	}
	return res, nil
}

// PermissionRequest asks the plugin whether a call that needs approval may
// run.
func (c *Client) PermissionRequest(ctx context.Context, req Request) (PermissionResult, error) {
	if !c.Handles(EventPermissionRequest) {
		return NoDecision(), nil
	}
	resp, err := c.rpc.PermissionRequest(ctx, &hookv1.PermissionRequestRequest{Call: requestToPB(req)})
	if err != nil {
		return PermissionResult{}, fmt.Errorf("calling hook PermissionRequest: %w", wire.FromRPC(ctx, err, c.exited))
	}
	decision, ok := decisionFromPB[resp.GetDecision()]
	if !ok {
		return PermissionResult{}, fmt.Errorf("calling hook PermissionRequest: %w",
			wire.BadResponse("decision %s is not NONE, ALLOW or DENY", resp.GetDecision()))
	}
	return PermissionResult{Decision: decision, Message: resp.GetMessage()}, nil
}

// PostToolUse reports a finished call to the plugin.
func (c *Client) PostToolUse(ctx context.Context, req Request, result ToolResult) (PostToolUseResult, error) {
	if !c.Handles(EventPostToolUse) {
		return PostToolUseResult{}, nil
	}
	resp, err := c.rpc.PostToolUse(ctx, &hookv1.PostToolUseRequest{
		Call: requestToPB(req),
		Result: &hookv1.ToolResult{
			ResultJson: result.JSON,
			IsError:    result.IsError,
			Error:      result.Error,
			DurationMs: result.Duration.Milliseconds(),
		},
	})
	if err != nil {
		return PostToolUseResult{}, fmt.Errorf("calling hook PostToolUse: %w", wire.FromRPC(ctx, err, c.exited))
	}
	return PostToolUseResult{Note: resp.GetNote()}, nil
}

func requestToPB(r Request) *hookv1.ToolCall {
	return &hookv1.ToolCall{
		Server:          r.Server,
		Tool:            r.Tool,
		ModelName:       r.ModelName,
		ArgumentsJson:   r.Arguments,
		Annotations:     wire.AnnotationsToPB(r.Annotations),
		ToolTitle:       r.ToolTitle,
		ToolDescription: r.ToolDescription,
		ApprovalMode:    r.ApprovalMode,
		Policy:          r.Policy,
		Permissions:     r.Permissions,
		SessionId:       r.SessionID,
		CallId:          r.CallID,
		Cwd:             r.Cwd,
		Caller:          wire.CallerToPB(r.Caller),
	}
}

func preToolUseFromPB(resp *hookv1.PreToolUseResponse) (PreToolUseResult, error) {
	switch a := resp.GetAction().(type) {
	case *hookv1.PreToolUseResponse_ContinueCall:
		return Continue(), nil
	case *hookv1.PreToolUseResponse_Block:
		return Block(a.Block.GetReason()), nil
	case *hookv1.PreToolUseResponse_Rewrite:
		args := a.Rewrite.GetArgumentsJson()
		if !isJSONObject(args) {
			return PreToolUseResult{}, wire.BadResponse("rewrite arguments are not a JSON object")
		}
		return Rewrite(args, a.Rewrite.GetReason()), nil
	case nil:
		return PreToolUseResult{}, wire.BadResponse("no action (continue, block or rewrite) set")
	default:
		return PreToolUseResult{}, wire.BadResponse("unknown action %T", a)
	}
}

func isJSONObject(b []byte) bool {
	trimmed := bytes.TrimSpace(b)
	return len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(trimmed)
}

var decisionFromPB = map[hookv1.PermissionDecision]Decision{
	hookv1.PermissionDecision_PERMISSION_DECISION_NONE:  DecisionNone,
	hookv1.PermissionDecision_PERMISSION_DECISION_ALLOW: DecisionAllow,
	hookv1.PermissionDecision_PERMISSION_DECISION_DENY:  DecisionDeny,
}
