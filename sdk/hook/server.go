package hook

import (
	"context"
	"encoding/json"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/sdk/internal/pb/hookv1"
	"github.com/toolgate/toolgate/sdk/internal/wire"
)

// server is the plugin-side shim: it turns gRPC requests into calls of the
// author's Hook.
type server struct {
	hookv1.UnimplementedHookServiceServer
	impl Hook
	log  hclog.Logger
}

func (s *server) PreToolUse(ctx context.Context, req *hookv1.PreToolUseRequest) (resp *hookv1.PreToolUseResponse, err error) {
	defer wire.Recover(s.log, "PreToolUse", &err)
	res, err := s.impl.PreToolUse(ctx, requestFromPB(req.GetCall()))
	if err != nil {
		return nil, wire.ToStatus(err)
	}
	return preToolUseToPB(res), nil
}

func (s *server) PermissionRequest(ctx context.Context, req *hookv1.PermissionRequestRequest) (resp *hookv1.PermissionRequestResponse, err error) {
	defer wire.Recover(s.log, "PermissionRequest", &err)
	res, err := s.impl.PermissionRequest(ctx, requestFromPB(req.GetCall()))
	if err != nil {
		return nil, wire.ToStatus(err)
	}
	return &hookv1.PermissionRequestResponse{
		Decision: decisionToPB[res.Decision], // an unknown Go value goes out as UNSPECIFIED and is refused by the host
		Message:  res.Message,
	}, nil
}

func (s *server) PostToolUse(ctx context.Context, req *hookv1.PostToolUseRequest) (resp *hookv1.PostToolUseResponse, err error) {
	defer wire.Recover(s.log, "PostToolUse", &err)
	res, err := s.impl.PostToolUse(ctx, requestFromPB(req.GetCall()), resultFromPB(req.GetResult()))
	if err != nil {
		return nil, wire.ToStatus(err)
	}
	return &hookv1.PostToolUseResponse{Note: res.Note}, nil
}

// PreResourceRead calls the hook's [ResourceReadHook]; a hook without one
// answers Unimplemented, as a plugin older than the event does (the host
// asks only hooks that listed it).
func (s *server) PreResourceRead(ctx context.Context, req *hookv1.PreResourceReadRequest) (resp *hookv1.PreResourceReadResponse, err error) {
	defer wire.Recover(s.log, "PreResourceRead", &err)
	h, ok := s.impl.(ResourceReadHook)
	if !ok {
		return s.UnimplementedHookServiceServer.PreResourceRead(ctx, req)
	}
	r := req.GetRead()
	res, err := h.PreResourceRead(ctx, ResourceRequest{
		Server: r.GetServer(), URI: r.GetUri(), ClientURI: r.GetModelUri(), SessionID: r.GetSessionId(),
		CallID: r.GetCallId(), Cwd: r.GetCwd(), Caller: wire.CallerFromPB(r.GetCaller()),
	})
	if err != nil {
		return nil, wire.ToStatus(err)
	}
	resp = &hookv1.PreResourceReadResponse{}
	switch res.Action {
	case ActionContinue:
		resp.Action = &hookv1.PreResourceReadResponse_ContinueRequest{ContinueRequest: &hookv1.Continue{}}
	case ActionBlock:
		resp.Action = &hookv1.PreResourceReadResponse_Block{Block: &hookv1.Block{Reason: res.Reason}}
	}
	// A rewrite goes out with no action set; the host refuses it.
	return resp, nil
}

// PrePromptGet calls the hook's [PromptGetHook], like PreResourceRead.
func (s *server) PrePromptGet(ctx context.Context, req *hookv1.PrePromptGetRequest) (resp *hookv1.PrePromptGetResponse, err error) {
	defer wire.Recover(s.log, "PrePromptGet", &err)
	h, ok := s.impl.(PromptGetHook)
	if !ok {
		return s.UnimplementedHookServiceServer.PrePromptGet(ctx, req)
	}
	g := req.GetGet()
	res, err := h.PrePromptGet(ctx, PromptRequest{
		Server: g.GetServer(), Prompt: g.GetPrompt(), ModelName: g.GetModelName(), Arguments: g.GetArguments(),
		SessionID: g.GetSessionId(), CallID: g.GetCallId(), Cwd: g.GetCwd(), Caller: wire.CallerFromPB(g.GetCaller()),
	})
	if err != nil {
		return nil, wire.ToStatus(err)
	}
	resp = &hookv1.PrePromptGetResponse{}
	switch res.Action {
	case ActionContinue:
		resp.Action = &hookv1.PrePromptGetResponse_ContinueRequest{ContinueRequest: &hookv1.Continue{}}
	case ActionBlock:
		resp.Action = &hookv1.PrePromptGetResponse_Block{Block: &hookv1.Block{Reason: res.Reason}}
	}
	return resp, nil
}

func requestFromPB(c *hookv1.ToolCall) Request {
	return Request{
		Server:          c.GetServer(),
		Tool:            c.GetTool(),
		ModelName:       c.GetModelName(),
		Arguments:       argumentsOrEmpty(c.GetArgumentsJson()),
		Annotations:     wire.AnnotationsFromPB(c.GetAnnotations()),
		ToolTitle:       c.GetToolTitle(),
		ToolDescription: c.GetToolDescription(),
		ApprovalMode:    c.GetApprovalMode(),
		Policy:          c.GetPolicy(),
		Permissions:     c.GetPermissions(),
		SessionID:       c.GetSessionId(),
		CallID:          c.GetCallId(),
		Cwd:             c.GetCwd(),
		Caller:          wire.CallerFromPB(c.GetCaller()),
	}
}

// argumentsOrEmpty keeps the promise that Arguments is an object even when
// a host sent nothing.
func argumentsOrEmpty(b []byte) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("{}")
	}
	return b
}

func resultFromPB(r *hookv1.ToolResult) ToolResult {
	var res ToolResult
	if len(r.GetResultJson()) > 0 {
		res.JSON = r.GetResultJson()
	}
	res.IsError = r.GetIsError()
	res.Error = r.GetError()
	res.Duration = time.Duration(r.GetDurationMs()) * time.Millisecond
	return res
}

func preToolUseToPB(res PreToolUseResult) *hookv1.PreToolUseResponse {
	resp := &hookv1.PreToolUseResponse{}
	switch res.Action {
	case ActionContinue:
		resp.Action = &hookv1.PreToolUseResponse_ContinueCall{ContinueCall: &hookv1.Continue{}}
	case ActionBlock:
		resp.Action = &hookv1.PreToolUseResponse_Block{Block: &hookv1.Block{Reason: res.Reason}}
	case ActionRewrite:
		resp.Action = &hookv1.PreToolUseResponse_Rewrite{Rewrite: &hookv1.Rewrite{ArgumentsJson: res.Arguments, Reason: res.Reason}}
	}
	// An unknown Action goes out with no action set; the host refuses it.
	return resp
}

var decisionToPB = map[Decision]hookv1.PermissionDecision{
	DecisionNone:  hookv1.PermissionDecision_PERMISSION_DECISION_NONE,
	DecisionAllow: hookv1.PermissionDecision_PERMISSION_DECISION_ALLOW,
	DecisionDeny:  hookv1.PermissionDecision_PERMISSION_DECISION_DENY,
}
