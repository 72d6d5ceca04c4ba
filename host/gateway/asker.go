package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/exposure"
	"github.com/toolgate/toolgate/host/pipeline"
)

var _ approval.Asker = (*Gateway)(nil)

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
// into a denial saying so and how to configure a hook or the Guardian.
func (g *Gateway) AskApproval(ctx context.Context, p approval.Prompt) (approval.Choice, error) {
	c := callFrom(ctx)
	if c == nil || c.s.id != p.SessionID {
		return approval.ChoiceDecline, fmt.Errorf("%w: the call did not come from an upstream MCP client of toolgate serve", approval.ErrNobodyToAsk)
	}
	why := c.s.cannotAsk(c.ss, "form")
	// ---- Held approvals (package inbox): the one place the user step
	// goes to the inbox instead of the client (no elicitation, or a
	// route { to = "inbox" }).
	if in := g.opts.Inbox; in != nil && in.Handles(p, why == "") {
		return in.Ask(ctx, p, c.waiting())
	}
	// ----
	if why != "" {
		return approval.ChoiceDecline, &approval.NobodyToAsk{Why: why, Next: g.nextSteps(p)}
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

// waiting reports to the client, while its call is held for approval,
// that it waits and where: as progress (under the call's progress token,
// so clients show it and do not time out) and as a log message.
func (c *call) waiting() func(string) {
	var n float64
	return func(msg string) {
		n++
		c.queueProgress(&mcp.ProgressNotificationParams{Message: msg, Progress: n})
		c.queueLog(&mcp.LoggingMessageParams{Level: "notice", Logger: "toolgate", Data: msg})
	}
}

// Elicit forwards a downstream server's elicitation to the upstream
// client of the call it belongs to. Under 2026-07-28 downstream the
// elicitation carries its call's context; under older versions it is
// matched to the call running on that server, which is unambiguous
// unless calls of several upstream sessions run on it at once (then it is
// declined, and the log says how to fix it).
func (g *Gateway) Elicit(ctx context.Context, e approval.Elicitation) (*mcp.ElicitResult, error) {
	c, why := g.callFor(ctx, e.Server)
	mode := e.Params.Mode
	if mode == "" && e.Params.URL != "" {
		mode = "url"
	}
	if c != nil {
		why = c.s.cannotAsk(c.ss, mode)
	}
	var out *mcp.ElicitResult
	args, _ := json.Marshal(map[string]string{"mode": cmp.Or(mode, "form")})
	res := g.forward(ctx, c, pipeline.Request{Kind: pipeline.Elicitation, Server: e.Server, Arguments: args,
		Check: refusal(why),
		Forward: func(ctx context.Context) (json.RawMessage, error) {
			res, err := c.elicit(ctx, e.Params)
			if err != nil {
				return nil, err
			}
			out = res
			return json.Marshal(map[string]string{"action": res.Action})
		}})
	switch {
	case res.Refused():
		g.warns.Warn(g.log, "declining a server's elicitation", "server", e.Server, "reason", why)
		return nil, fmt.Errorf("%w: %s", approval.ErrNobodyToAsk, why)
	case res.Err != nil:
		return nil, fmt.Errorf("forward an elicitation of server %q: %w", e.Server, res.Err)
	}
	return out, nil
}

// Sample forwards a downstream server's sampling/createMessage to the
// upstream client of the call it belongs to, found as for [Gateway.Elicit]
// (wire it as manager.Options.Sample; the manager declares sampling only
// to servers with forward_sampling). It is refused, with a JSON-RPC error
// that says why, outside a call or when that client cannot sample. Each
// request goes through the pipeline as kind "sampling", so it is audited
// like every other request (begin and end records with the call's caller).
func (g *Gateway) Sample(ctx context.Context, server string, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
	c, why := g.callFor(ctx, server)
	var args json.RawMessage
	switch {
	case req.Params == nil:
		why = "the sampling request has no params"
	default:
		args, _ = json.Marshal(map[string]int64{"messages": int64(len(req.Params.Messages)), "max_tokens": req.Params.MaxTokens})
		if c != nil {
			why = c.s.cannotSample(c.ss, req.Params)
		}
	}
	var out *mcp.CreateMessageWithToolsResult
	res := g.forward(ctx, c, pipeline.Request{Kind: pipeline.Sampling, Server: server, Arguments: args,
		Check: refusal(why),
		Forward: func(ctx context.Context) (json.RawMessage, error) {
			res, err := c.ask(ctx, req.Params)
			if err != nil {
				return nil, err
			}
			r, _ := res.(*mcp.CreateMessageWithToolsResult)
			if r == nil {
				return nil, errors.New("the MCP client sent no sampling result")
			}
			out = r
			return json.Marshal(map[string]string{"model": r.Model})
		}})
	switch {
	case res.Refused():
		g.warns.Warn(g.log, "refusing a server's sampling request", "server", server, "reason", why)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "toolgate: " + why}
	case res.Err != nil:
		return nil, fmt.Errorf("forward a sampling request of server %q: %w", server, res.Err)
	}
	return out, nil
}

// refusal is the admit check of a forwarded request: why it cannot be
// forwarded, "" when it can.
func refusal(why string) func() error {
	return func() error {
		if why != "" {
			return errors.New(why)
		}
		return nil
	}
}

// forward runs a request a server sent upstream through the attached
// host's pipeline, as part of call c (nil: it belongs to no call, and is
// refused by its check).
func (g *Gateway) forward(ctx context.Context, c *call, r pipeline.Request) pipeline.Result {
	if c != nil {
		r.SessionID, r.ModelName, r.Caller, r.Client = c.s.id, c.tool.name, c.s.caller, c.s.client()
	}
	g.mu.Lock()
	h := g.host
	g.mu.Unlock()
	if h == nil {
		return pipeline.Result{Status: events.CallFailed, Err: errors.New("the gateway is not attached to a host")}
	}
	return h.Pipeline().Do(ctx, r)
}

// callFor finds the call a server-initiated request belongs to: the one
// in ctx (2026-07-28 downstream), else the one running on server. With
// none it says why.
func (g *Gateway) callFor(ctx context.Context, server string) (*call, string) {
	if c := callFrom(ctx); c != nil {
		return c, ""
	}
	return g.callTo(server)
}

// callTo finds the call a server-initiated request without a call
// context belongs to.
func (g *Gateway) callTo(server string) (*call, string) {
	var found []*call
	for _, s := range g.snapshot() {
		if c := s.callTo(server); c != nil {
			found = append(found, c)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Sprintf("server %q asked for input outside any call from an upstream client", server)
	case 1:
		return found[0], ""
	}
	return nil, fmt.Sprintf("server %q asked for input while calls of %d upstream sessions were running on it, "+
		"and its protocol version does not say which call asked; set protocol_version = %q in its server block "+
		"so that its elicitations carry their call", server, len(found), "2026-07-28")
}

// ForwardLog forwards a downstream server's notifications/message
// upstream (wire it as manager.Options.ServerLog). A message is sent with
// the calls running on that server, or to every session when none is;
// its logger names the server. Clients receive only messages at or above
// the level they set (logging/setLevel).
func (g *Gateway) ForwardLog(_ context.Context, server string, p *mcp.LoggingMessageParams) {
	g.log.Debug("server log message", "server", server, "level", p.Level, "logger", p.Logger)
	fwd := *p
	fwd.Logger = server
	if p.Logger != "" && p.Logger != server {
		fwd.Logger = server + "/" + p.Logger
	}
	sessions := g.snapshot()
	sent := false
	for _, s := range sessions {
		if c := s.callTo(server); c != nil {
			c.queueLog(&fwd)
			sent = true
		}
	}
	if sent {
		return
	}
	for _, s := range sessions {
		s.notice(&fwd)
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
