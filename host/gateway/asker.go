package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/exposure"
	"github.com/toolgate/toolgate/host/pipeline"
)

// A call is the pipeline.Upstream of its requests: the session it came
// from, bound to the upstream request that serves the call now, so that
// what the call's server sends back goes under that request.
var _ pipeline.Upstream = (*call)(nil)

// Decision values of the approval form. Decline is not among them: the
// form's own decline action means it.
const (
	decisionAllow        = "allow"
	decisionAllowSession = "allow_session"
	decisionAllowAlways  = "allow_always"
	decisionCancel       = "cancel"
)

// MetaKeyApproval is the _meta key of an approval form that carries the
// call under review as data, for clients that render it themselves.
const MetaKeyApproval = "dev.toolgate/approval"

// maxArgumentsInForm bounds the argument text shown in an approval form.
const maxArgumentsInForm = 4000

// AskApproval asks the upstream client whose call this is, with a form
// elicitation naming the server, tool, arguments and annotations. It
// implements the user step of approval in gateway mode. A client that
// cannot take elicitations gets ErrNobodyToAsk, which the procedure turns
// into a denial saying so and how to configure a hook or the Guardian;
// with an inbox, its decorator (inbox.Inbox.Wrap, see session.upstream)
// holds the call instead.
func (c *call) AskApproval(ctx context.Context, p approval.Prompt) (approval.Choice, error) {
	if why := c.s.cannotAsk(c.ss, "form"); why != "" {
		return approval.ChoiceDecline, &approval.NobodyToAsk{Why: why, Next: c.s.g.nextSteps(p)}
	}
	res, err := c.elicit(ctx, approvalForm(p, c.tool.name))
	if err != nil {
		return approval.ChoiceDecline, fmt.Errorf("ask the upstream MCP client: %w", err)
	}
	return choiceOf(res, p.Choices), nil
}

// nextSteps is what a user of toolgate serve can do when nobody could be
// asked about p: hold such calls in the inbox, or decide without a human.
func (g *Gateway) nextSteps(p approval.Prompt) string {
	at := "at /approvals of toolgate serve"
	if g.opts.Inbox != nil {
		at = "at " + g.opts.Inbox.URL()
	}
	return fmt.Sprintf("To approve such calls from a browser, the terminal or a chat message, add an inbox {} block, on a line of its own, inside the approval block "+
		"of toolgate's configuration: they are then held %s until someone approves them. "+
		"Or let a permission hook or the Guardian reviewer (approval { reviewer = \"guardian\" }) decide, "+
		"or allow this tool without asking by adding tool %q { approval_mode = %q } to the server %q block.",
		at, p.Tool, "approve", p.Server)
}

// Elicit forwards a downstream server's elicitation, made during this
// call, to the call's upstream client. The host found the call (see
// pipeline.Running.For); one it cannot find is refused there.
func (c *call) Elicit(ctx context.Context, e approval.Elicitation) (*mcp.ElicitResult, error) {
	why := c.s.cannotAsk(c.ss, pipeline.ElicitationMode(e.Params))
	var out *mcp.ElicitResult
	r := pipeline.ElicitationRequest(e.Server, e.Params)
	r.Check = pipeline.Refusal(why)
	r.Forward = func(ctx context.Context) (json.RawMessage, error) {
		res, err := c.elicit(ctx, e.Params)
		if err != nil {
			return nil, err
		}
		out = res
		return json.Marshal(map[string]string{"action": res.Action})
	}
	res := c.pass(ctx, r)
	switch {
	case res.Refused():
		c.s.g.warns.Warn(c.s.g.log, "declining a server's elicitation", "server", e.Server, "reason", why)
		return nil, fmt.Errorf("%w: %s", approval.ErrNobodyToAsk, why)
	case res.Err != nil:
		return nil, fmt.Errorf("forward an elicitation of server %q: %w", e.Server, res.Err)
	}
	return out, nil
}

// Sample forwards a downstream server's sampling/createMessage, made
// during this call, to the call's upstream client (the manager offers
// sampling only to servers with forward_sampling). It is refused, with a
// JSON-RPC error that says why, when that client cannot sample. Each
// request goes through the pipeline as kind "sampling", so it is audited
// like every other request (begin and end records with the call's caller).
func (c *call) Sample(ctx context.Context, server string, params *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	why := "the sampling request has no params"
	if params != nil {
		why = c.s.cannotSample(c.ss, params)
	}
	var out *mcp.CreateMessageWithToolsResult
	r := pipeline.SamplingRequest(server, params)
	r.Check = pipeline.Refusal(why)
	r.Forward = func(ctx context.Context) (json.RawMessage, error) {
		res, err := c.ask(ctx, params)
		if err != nil {
			return nil, err
		}
		s, _ := res.(*mcp.CreateMessageWithToolsResult)
		if s == nil {
			return nil, errors.New("the MCP client sent no sampling result")
		}
		out = s
		return json.Marshal(map[string]string{"model": s.Model})
	}
	res := c.pass(ctx, r)
	switch {
	case res.Refused():
		c.s.g.warns.Warn(c.s.g.log, "refusing a server's sampling request", "server", server, "reason", why)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "toolgate: " + why}
	case res.Err != nil:
		return nil, fmt.Errorf("forward a sampling request of server %q: %w", server, res.Err)
	}
	return out, nil
}

// Log queues a server's log message for the client, under the call's
// request.
func (c *call) Log(p *mcp.LoggingMessageParams) { c.queueLog(p) }

// Progress is where the server's progress goes: queued for the request
// serving the call, when it asked for progress (a 2026-07-28 client may
// ask in a later round).
func (c *call) Progress() func(*mcp.ProgressNotificationParams) {
	if c.inputViaRounds || c.token != nil {
		return c.queueProgress
	}
	return nil
}

// pass runs a request a server sent upstream during the call through
// the host's pipeline, as part of the call.
func (c *call) pass(ctx context.Context, r pipeline.Request) pipeline.Result {
	r.SessionID, r.ModelName, r.Caller, r.Client = c.s.id, c.tool.name, c.s.caller, c.s.client()
	return c.s.h.Pipeline().Do(ctx, r)
}

// broadcastLog sends a server's log message that belongs to no call to
// every session (a host.Listener).
func (g *Gateway) broadcastLog(p *mcp.LoggingMessageParams) {
	for _, s := range g.snapshot() {
		s.notice(p)
	}
}

// approvalForm is the elicitation that asks for one call's approval.
func approvalForm(p approval.Prompt, served string) *mcp.ElicitParams {
	var values, labels []any
	for _, c := range p.Choices {
		if v := decisionOf(c); v != "" {
			values = append(values, v)
			labels = append(labels, c.String())
		}
	}
	args := prettyArguments(p.Arguments)

	var b strings.Builder
	b.WriteString(p.Question + "\n\n")
	fmt.Fprintf(&b, "Server: %s\nTool: %s", p.Server, p.Tool)
	if served != p.Tool {
		fmt.Fprintf(&b, " (called as %s)", served)
	}
	b.WriteString("\n")
	title := p.Title
	if title == "" && p.Annotations != nil {
		title = p.Annotations.Title
	}
	if title != "" {
		fmt.Fprintf(&b, "Title: %s\n", title)
	}
	if d := strings.TrimSpace(p.Description); d != "" {
		d, _, _ = strings.Cut(d, "\n")
		fmt.Fprintf(&b, "About: %s\n", d)
	}
	fmt.Fprintf(&b, "Annotations: %s\n", describeAnnotations(p.Annotations))
	fmt.Fprintf(&b, "Arguments:\n%s\n\n", args)
	b.WriteString("Choose a decision and accept, or decline to reject the call.")

	var annotations any
	if p.Annotations != nil {
		annotations = p.Annotations
	}
	return &mcp.ElicitParams{
		Mode:    "form",
		Message: b.String(),
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"decision": map[string]any{
					"type":        "string",
					"title":       "Decision",
					"description": "What toolgate should do with this call.",
					"enum":        values,
					"enumNames":   labels,
				},
			},
			"required": []any{"decision"},
		},
		Meta: mcp.Meta{MetaKeyApproval: map[string]any{
			"server":        p.Server,
			"tool":          p.Tool,
			"name":          served,
			"arguments":     json.RawMessage(argumentsOrEmpty(p.Arguments)),
			"annotations":   annotations,
			"approval_mode": string(p.Mode),
			"call_id":       p.CallID,
		}},
	}
}

func argumentsOrEmpty(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || !json.Valid(raw) {
		return json.RawMessage(`{}`)
	}
	return raw
}

func prettyArguments(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(argumentsOrEmpty(raw), &v); err != nil {
		return string(raw)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return string(raw)
	}
	if len(b) > maxArgumentsInForm {
		return string(b[:maxArgumentsInForm]) + fmt.Sprintf("\n… (%d more bytes)", len(b)-maxArgumentsInForm)
	}
	return string(b)
}

// describeAnnotations spells out the hints, with the defaults the
// approval rules assume for absent ones.
func describeAnnotations(a *mcp.ToolAnnotations) string {
	if a == nil {
		return "none declared (treated as possibly destructive)"
	}
	yesNo := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	hint := func(p *bool) string {
		if p == nil {
			return "not declared (assumed yes)"
		}
		return yesNo(*p)
	}
	return fmt.Sprintf("read-only: %s; destructive: %s; idempotent: %s; open world: %s",
		yesNo(a.ReadOnlyHint), hint(a.DestructiveHint), yesNo(a.IdempotentHint), hint(a.OpenWorldHint))
}

func decisionOf(c approval.Choice) string {
	switch c {
	case approval.ChoiceAllow:
		return decisionAllow
	case approval.ChoiceAllowSession:
		return decisionAllowSession
	case approval.ChoiceAllowAlways:
		return decisionAllowAlways
	case approval.ChoiceCancel:
		return decisionCancel
	}
	return ""
}

// choiceOf reads the answer to an approval form. Anything but an accepted
// form with an offered decision denies: decline rejects, the rest cancels.
func choiceOf(res *mcp.ElicitResult, offered []approval.Choice) approval.Choice {
	if res == nil {
		return approval.ChoiceCancel
	}
	switch res.Action {
	case approval.ActionDecline:
		return approval.ChoiceDecline
	case approval.ActionAccept:
	default:
		return approval.ChoiceCancel
	}
	v, _ := res.Content["decision"].(string)
	for _, c := range offered {
		if c != approval.ChoiceDecline && decisionOf(c) == v {
			return c
		}
	}
	return approval.ChoiceCancel
}

// renameFound rewrites the tool names of a tool_search result to their
// upstream names, which differ from model names for servers with
// prefix = false.
func (s *session) renameFound(res *mcp.CallToolResult) *mcp.CallToolResult {
	s.mu.Lock()
	plan := s.plan
	s.mu.Unlock()
	var found exposure.SearchResult
	if plan == nil || res.IsError || remarshal(res.StructuredContent, &found) != nil {
		return res
	}
	changed := false
	for i := range found.Tools {
		for j := range found.Tools[i].Tools {
			t := &found.Tools[i].Tools[j]
			if name, ok := plan.byModel[t.Name]; ok && name != t.Name {
				t.Name, changed = name, true
			}
		}
	}
	if !changed {
		return res
	}
	text, err := json.Marshal(found)
	if err != nil {
		return res
	}
	var structured map[string]any
	if err := json.Unmarshal(text, &structured); err != nil {
		return res
	}
	out := *res
	out.Content = []mcp.Content{&mcp.TextContent{Text: string(text)}}
	out.StructuredContent = structured
	return &out
}

// remarshal converts v into into through JSON: structured content arrives
// as whatever go-sdk decoded it to.
func remarshal(v any, into any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}
