package inbox_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/inbox"
	"github.com/toolgate/toolgate/host/pipeline"
)

// client is a session's Upstream: it answers allow, or cannot ask.
type client struct {
	cannotAsk bool
	asked     int
}

func (c *client) AskApproval(context.Context, approval.Prompt) (approval.Choice, error) {
	c.asked++
	if c.cannotAsk {
		return approval.ChoiceDecline, &approval.NobodyToAsk{Why: "the client takes no elicitation", Next: "configure an inbox"}
	}
	return approval.ChoiceAllow, nil
}
func (c *client) Elicit(context.Context, approval.Elicitation) (*mcp.ElicitResult, error) {
	return nil, approval.ErrNobodyToAsk
}
func (c *client) Sample(context.Context, string, *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	return nil, errors.New("no sampling")
}
func (c *client) Log(*mcp.LoggingMessageParams)                   {}
func (c *client) Progress() func(*mcp.ProgressNotificationParams) { return nil }

// TestWrapTakesTheQuestionTheClientCannotAnswer: the inbox is a
// decorator of a session's Upstream. A client that can answer is asked;
// one that cannot gets the call held (retry mode: denied at once with
// the approval's link); a route { to = "inbox" } holds the call without
// asking the client; without an inbox block the client's own "nobody to
// ask" stands.
func TestWrapTakesTheQuestionTheClientCannotAnswer(t *testing.T) {
	retry := &config.Inbox{Mode: config.InboxRetry, Timeout: time.Minute, Expiry: time.Hour}
	routed := *retry
	routed.Routes = []config.InboxRoute{{Tools: []string{"delete_file"}, To: config.RouteInbox}}
	for _, tt := range []struct {
		name      string
		cfg       *config.Inbox
		cannotAsk bool
		asked     int  // times the client was asked
		held      bool // the inbox holds the call
	}{
		{"the client answers", retry, false, 1, false},
		{"the client cannot ask", retry, true, 1, true},
		{"a route sends it to the inbox", &routed, false, 0, true},
		{"no inbox block", nil, true, 1, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in, _ := newInbox(t, tt.cfg, inbox.Options{})
			c := &client{cannotAsk: tt.cannotAsk}
			var up pipeline.Upstream = in.Wrap(c)
			choice, err := up.AskApproval(t.Context(), prompt(`{"path":"a.txt"}`, alice))
			if c.asked != tt.asked {
				t.Errorf("client asked %d times, want %d", c.asked, tt.asked)
			}
			var denial *approval.AskerDenial
			if held := errors.As(err, &denial); held != tt.held || (tt.held && len(in.List()) != 1) {
				t.Errorf("held = %v (%d approvals), want %v; choice %v, err %v", held, len(in.List()), tt.held, choice, err)
			}
			switch {
			case tt.held:
			case tt.cannotAsk && !errors.Is(err, approval.ErrNobodyToAsk):
				t.Errorf("without an inbox the client's nobody-to-ask stands, got %v", err)
			case !tt.cannotAsk && (err != nil || choice != approval.ChoiceAllow):
				t.Errorf("the client's answer: %v %v", choice, err)
			}
		})
	}
}
