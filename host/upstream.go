package host

import (
	"context"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/manager"
	"github.com/toolgate/toolgate/host/pipeline"
)

// Listener receives what servers send that belongs to no request of a
// session: updates of subscribed resources, and log messages sent while
// no call of any session runs on their server. Whatever belongs to a
// call goes to that call's pipeline.Upstream instead. toolgate serve's
// gateway is the one listener: it sends such messages to every session
// (a subscription is the gateway's, shared by its sessions). Both funcs
// run on a server connection's read path and must not block; nil ones
// are skipped.
type Listener struct {
	ResourceUpdated func(server, uri string)
	ServerLog       func(p *mcp.LoggingMessageParams)
}

// listeners are the host's Listeners (see Listen).
type listeners struct {
	mu   sync.Mutex
	next int
	all  map[int]Listener
}

// Listen adds l until the returned func runs.
func (h *Host) Listen(l Listener) (stop func()) {
	ls := &h.listeners
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.all == nil {
		ls.all = map[int]Listener{}
	}
	id := ls.next
	ls.next++
	ls.all[id] = l
	return func() {
		ls.mu.Lock()
		delete(ls.all, id)
		ls.mu.Unlock()
	}
}

func (ls *listeners) each(f func(Listener)) {
	ls.mu.Lock()
	all := make([]Listener, 0, len(ls.all))
	for _, l := range ls.all {
		all = append(all, l)
	}
	ls.mu.Unlock()
	for _, l := range all {
		f(l)
	}
}

// wireUpstream routes what servers send back to the session it belongs
// to (see pipeline.Running): elicitations always; sampling and log
// messages only when the host serves upstream clients (toolgate serve),
// which is the only front end that offers sampling to servers, and
// whose clients take servers' log messages. Elsewhere a server's log
// messages go to toolgate's own log, as the connection writes them.
func (h *Host) wireUpstream(mo *manager.Options) {
	mo.Elicit = h.elicit
	mo.ResourceUpdated = func(server, uri string) {
		h.listeners.each(func(l Listener) {
			if l.ResourceUpdated != nil {
				l.ResourceUpdated(server, uri)
			}
		})
	}
	if !h.opts.Serving {
		return
	}
	mo.Sample = h.sample
	mo.ServerLog = h.serverLog
}

// elicit answers a server's elicitation through the session of the call
// it belongs to. With none, a serving host records the refusal (kind
// elicitation, denied with the reason) and declines.
func (h *Host) elicit(ctx context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	up, why := h.running.For(ctx, server)
	var a approval.Asker = up
	if up == nil {
		if !h.opts.Serving {
			a = nil
		} else {
			a = &unrouted{h: h, why: why}
		}
	}
	return h.Approval().Elicit(ctx, a, server, req.Params)
}

// sample forwards a server's sampling request to the session of the call
// it belongs to, or refuses it (recorded as kind sampling, denied) with
// a JSON-RPC error that says why.
func (h *Host) sample(ctx context.Context, server string, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
	up, why := h.running.For(ctx, server)
	if up != nil {
		return up.Sample(ctx, server, req.Params)
	}
	r := pipeline.SamplingRequest(server, req.Params)
	r.Check = pipeline.Refusal(why)
	h.Pipeline().Do(ctx, r)
	h.warns.Warn(h.log, "refusing a server's sampling request", "server", server, "reason", why)
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "toolgate: " + why}
}

// serverLog forwards a server's log message with the calls running on
// that server, or to the listeners when none is; its logger names the
// server.
func (h *Host) serverLog(_ context.Context, server string, p *mcp.LoggingMessageParams) {
	h.log.Debug("server log message", "server", server, "level", p.Level, "logger", p.Logger)
	fwd := *p
	fwd.Logger = server
	if p.Logger != "" && p.Logger != server {
		fwd.Logger = server + "/" + p.Logger
	}
	if ups := h.running.On(server); len(ups) > 0 {
		for _, up := range ups {
			up.Log(&fwd)
		}
		return
	}
	h.listeners.each(func(l Listener) {
		if l.ServerLog != nil {
			l.ServerLog(&fwd)
		}
	})
}

// unrouted is the asker of an elicitation that belongs to no call a
// serving host can find: it records the refusal and says why nobody was
// asked.
type unrouted struct {
	h   *Host
	why string
}

func (u *unrouted) AskApproval(context.Context, approval.Prompt) (approval.Choice, error) {
	return approval.ChoiceDecline, fmt.Errorf("%w: %s", approval.ErrNobodyToAsk, u.why)
}

func (u *unrouted) Elicit(ctx context.Context, e approval.Elicitation) (*mcp.ElicitResult, error) {
	r := pipeline.ElicitationRequest(e.Server, e.Params)
	r.Check = pipeline.Refusal(u.why)
	u.h.Pipeline().Do(ctx, r)
	u.h.warns.Warn(u.h.log, "declining a server's elicitation", "server", e.Server, "reason", u.why)
	return nil, fmt.Errorf("%w: %s", approval.ErrNobodyToAsk, u.why)
}
