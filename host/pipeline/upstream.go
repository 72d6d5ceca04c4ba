package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/approval"
)

// Upstream is the other end of the session a request came from: whoever
// the pipeline talks back to while the request runs. It is carried on
// the [Request], never in a context value and never process-wide, so
// that a gateway serving many clients asks each one about its own calls.
//
// Implementations: the terminal of toolgate call (package terminal), a
// toolgate serve session, handed per call so that what it sends goes
// under that call's request (package gateway), and the held-approval
// inbox, which wraps a session's Upstream and takes the approval
// question when the client cannot answer it or a route sends it there
// (package inbox).
//
// The methods may be called concurrently (a server may ask for input
// while a log message arrives) and each implementation serializes its
// own prompts. AskApproval, Elicit and Sample return promptly when ctx
// ends, with an error wrapping ctx.Err(). When no human can be reached
// AskApproval and Elicit return an error wrapping
// [approval.ErrNobodyToAsk]: the approval procedure turns it into a
// denial that says what to configure, and an elicitation into a decline.
type Upstream interface {
	// AskApproval (the user step of approval) and Elicit (a server's
	// elicitation/create during the request) put a question to the
	// human.
	approval.Asker
	// Sample forwards a server's sampling/createMessage made during the
	// request. Only toolgate serve offers sampling to servers (with
	// forward_sampling); others return an error saying so.
	Sample(ctx context.Context, server string, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error)
	// Log delivers a server's log message sent during the request, its
	// Logger already naming its source ("server" or "server/logger").
	// It must not block: it runs on the server connection's read path.
	Log(p *mcp.LoggingMessageParams)
	// Progress returns where the server's progress notifications for
	// the request go; nil when the other end asked for none, and then no
	// progress token is sent to the server. What it returns must not
	// block, for the same reason as Log.
	Progress() func(*mcp.ProgressNotificationParams)
}

// Running finds the upstream of the tool call a server is running, when
// the server sends something back during it (elicitation, sampling, log
// messages), which arrives at the connection and not at the request. The
// host keeps one for the life of the process and hands it to every
// pipeline it builds, so calls begun before a reload are still found.
// The zero value is ready; it is safe for concurrent use.
type Running struct {
	mu  sync.Mutex
	seq uint64
	on  map[string]map[uint64]running // by server, then by call order
}

// running is one call running on a server. It is stored by value, so
// recording a call costs no allocation of its own.
type running struct {
	session string
	up      Upstream
}

// runningKey carries the Upstream of a tool call in the context of its
// execution: go-sdk runs a 2026-07-28 server's input requests (an
// elicitation inside the call's result) in the context of the CallTool
// that received them, and that context is the only thread back to the
// call. No other package reads it; they ask [Running.For].
type runningKey struct{}

// begin records a call of r's session as running on r's server until
// end(r.Server, seq), and returns ctx carrying its Upstream.
func (rn *Running) begin(ctx context.Context, r *Request) (context.Context, uint64) {
	rn.mu.Lock()
	rn.seq++
	seq := rn.seq
	if rn.on == nil {
		rn.on = map[string]map[uint64]running{}
	}
	set := rn.on[r.Server]
	if set == nil {
		set = map[uint64]running{}
		rn.on[r.Server] = set
	}
	set[seq] = running{session: r.SessionID, up: r.Upstream}
	rn.mu.Unlock()
	return context.WithValue(ctx, runningKey{}, r.Upstream), seq
}

// end forgets the call begin recorded.
func (rn *Running) end(server string, seq uint64) {
	rn.mu.Lock()
	delete(rn.on[server], seq)
	rn.mu.Unlock()
}

// For returns the upstream a server-initiated request of server belongs
// to: the call in ctx (a 2026-07-28 server asks inside its call), else
// the oldest call running on server. With none it returns why, a text
// for the server's refusal and the audit log. Calls of several sessions
// running on a server that does not say which one asked are ambiguous:
// nobody is asked rather than the wrong client.
func (rn *Running) For(ctx context.Context, server string) (Upstream, string) {
	if up, ok := ctx.Value(runningKey{}).(Upstream); ok {
		return up, ""
	}
	rn.mu.Lock()
	defer rn.mu.Unlock()
	var (
		best     running
		bestSeq  uint64
		sessions = map[string]struct{}{}
	)
	for seq, c := range rn.on[server] {
		sessions[c.session] = struct{}{}
		if best.up == nil || seq < bestSeq {
			best, bestSeq = c, seq
		}
	}
	switch {
	case best.up == nil:
		return nil, fmt.Sprintf("server %q asked for input outside any call from an upstream client", server)
	case len(sessions) > 1:
		return nil, fmt.Sprintf("server %q asked for input while calls of %d upstream sessions were running on it, "+
			"and its protocol version does not say which call asked; set protocol_version = %q in its server block "+
			"so that its elicitations carry their call", server, len(sessions), "2026-07-28")
	}
	return best.up, ""
}

// On returns the upstreams of the calls running on server, for a log
// message, which goes to each of them.
func (rn *Running) On(server string) []Upstream {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	set := rn.on[server]
	if len(set) == 0 {
		return nil
	}
	out := make([]Upstream, 0, len(set))
	for _, c := range set {
		out = append(out, c.up)
	}
	return out
}

// ElicitationMode is the mode of an elicitation as sent: "form" or
// "url" ("" = form, for servers older than URL mode).
func ElicitationMode(p *mcp.ElicitParams) string {
	if p.Mode == "" && p.URL != "" {
		return "url"
	}
	return p.Mode
}

// ElicitationRequest is the request of server's elicitation p forwarded
// upstream, with what its audit records keep of it (the mode); the door
// adds the check and the forwarding.
func ElicitationRequest(server string, p *mcp.ElicitParams) Request {
	args, _ := json.Marshal(map[string]string{"mode": cmp.Or(ElicitationMode(p), "form")})
	return Request{Kind: Elicitation, Server: server, Arguments: args}
}

// SamplingRequest is the request of server's sampling/createMessage p
// (nil: it had no params) forwarded upstream, with what its audit
// records keep of it (the number of messages and max tokens).
func SamplingRequest(server string, p *mcp.CreateMessageWithToolsParams) Request {
	r := Request{Kind: Sampling, Server: server}
	if p != nil {
		r.Arguments, _ = json.Marshal(map[string]int64{"messages": int64(len(p.Messages)), "max_tokens": p.MaxTokens})
	}
	return r
}

// Refusal is the admit check of a forwarded request: why it cannot be
// forwarded ("" when it can) as the check's error.
func Refusal(why string) func() error {
	return func() error {
		if why != "" {
			return errors.New(why)
		}
		return nil
	}
}
