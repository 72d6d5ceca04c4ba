package inbox

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/pipeline"
)

// Wrap returns up, the Upstream of one call of toolgate serve, with the
// inbox in front of its approval question: the inbox takes the question
// when a route sends the call there (route { to = "inbox" }), or when up
// cannot ask anyone (its client takes no elicitation: up answers
// approval.ErrNobodyToAsk) and an inbox block is configured. Everything
// else goes to up as it is. While a call is held in hold mode, up is told
// that it waits and where, as progress and as a log message.
func (in *Inbox) Wrap(up pipeline.Upstream) pipeline.Upstream {
	return &held{Upstream: up, in: in}
}

// held is the inbox as the third implementation of pipeline.Upstream: a
// decorator of a session's.
type held struct {
	pipeline.Upstream
	in *Inbox
}

func (h *held) AskApproval(ctx context.Context, p approval.Prompt) (approval.Choice, error) {
	if h.routed(p) {
		return h.in.Ask(ctx, p, h.waiting())
	}
	choice, err := h.Upstream.AskApproval(ctx, p)
	if errors.Is(err, approval.ErrNobodyToAsk) && ctx.Err() == nil && h.in.cfg() != nil {
		// The client cannot be asked: the inbox can.
		return h.in.Ask(ctx, p, h.waiting())
	}
	return choice, err
}

// routed reports whether a route block sends p's call to the inbox.
func (h *held) routed(p approval.Prompt) bool {
	c := h.in.cfg()
	if c == nil {
		return false
	}
	r := route(c, p.Server, p.Tool, p.Caller)
	return r != nil && r.To == config.RouteInbox
}

// waiting reports to the client, while its call is held for approval,
// that it waits and where: as progress (under the call's progress token,
// so clients show it and do not time out) and as a log message.
func (h *held) waiting() func(string) {
	progress := h.Upstream.Progress()
	var n float64
	return func(msg string) {
		n++
		if progress != nil {
			progress(&mcp.ProgressNotificationParams{Message: msg, Progress: n})
		}
		h.Upstream.Log(&mcp.LoggingMessageParams{Level: "notice", Logger: "toolgate", Data: msg})
	}
}
