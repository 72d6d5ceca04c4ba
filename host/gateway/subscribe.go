package gateway

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolgate/toolgate/host/pipeline"
)

// offerState is the gateway's part of resources, prompts and
// subscriptions: the current offer plan and how many sessions subscribe
// to each downstream resource.
type offerState struct {
	offerMu   sync.Mutex
	offerPlan *offerPlan

	subMu sync.Mutex
	// subCount counts the sessions subscribed to each downstream
	// resource: the server gets one subscribe for the first and one
	// unsubscribe after the last.
	subCount map[subKey]int
	// pending are updates not yet delivered. Only subscribed resources
	// enter it and a resource enters once however often its server
	// announces it, so a storm of resources/updated costs one
	// notification per subscriber and resource per delivery round.
	pending map[subKey]bool
	wake    chan struct{}
}

// unsubscribeTimeout bounds the unsubscribe sent when the last
// subscribed session ends.
const unsubscribeTimeout = 10 * time.Second

func (o *offerState) poke() {
	o.subMu.Lock()
	if o.wake == nil {
		o.wake = make(chan struct{}, 1)
	}
	w := o.wake
	o.subMu.Unlock()
	select {
	case w <- struct{}{}:
	default:
	}
}

// subscribe answers resources/subscribe: it routes the URI to its server
// and subscribes there through the pipeline.
func (g *Gateway) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	s, err := g.sessionOf(ctx, req.Session)
	if err != nil {
		return err
	}
	uri := req.Params.URI
	r, raw, ok := g.offers().route(uri)
	if !ok {
		return &jsonrpc.Error{Code: mcp.CodeResourceNotFound, Message: fmt.Sprintf("no server behind toolgate offers resource %q", uri)}
	}
	key := subKey{server: r.server, uri: raw}
	s.offers.mu.Lock()
	if _, dup := s.offers.subs[key]; dup {
		s.offers.mu.Unlock()
		return nil
	}
	if s.offers.subs == nil {
		s.offers.subs = map[subKey]string{}
	}
	s.offers.subs[key] = uri
	s.offers.mu.Unlock()

	g.subMu.Lock()
	if g.subCount == nil {
		g.subCount = map[subKey]int{}
	}
	g.subCount[key]++
	g.subMu.Unlock()
	// Every session's subscription is admitted and audited, so each one
	// is sent (a repeated resources/subscribe changes nothing on the
	// server); the last one to go sends the unsubscribe.
	if _, err := s.do(ctx, pipeline.Request{Kind: pipeline.ResourceSubscribe, Server: key.server, URI: key.uri,
		ModelName: uri, TraceParent: traceParentOf(req.Params.Meta, req.Extra)}); err != nil {
		s.offers.mu.Lock()
		delete(s.offers.subs, key)
		s.offers.mu.Unlock()
		g.releaseSubscription(key)
		return err
	}
	return nil
}

// unsubscribe answers resources/unsubscribe.
func (g *Gateway) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	s, err := g.sessionOf(ctx, req.Session)
	if err != nil {
		return err
	}
	s.offers.mu.Lock()
	var key subKey
	found := false
	for k, up := range s.offers.subs {
		if up == req.Params.URI {
			key, found = k, true
			delete(s.offers.subs, k)
			break
		}
	}
	s.offers.mu.Unlock()
	if !found {
		return nil
	}
	if g.releaseSubscription(key) {
		// A 2026-07-28 client unsubscribes by ending its listen stream,
		// whose context is cancelled by then: the server must still
		// hear of it.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unsubscribeTimeout)
		defer cancel()
		if _, err := s.do(ctx, pipeline.Request{Kind: pipeline.ResourceUnsubscribe, Server: key.server, URI: key.uri,
			ModelName: req.Params.URI}); err != nil {
			return err
		}
	}
	return nil
}

// releaseSubscription drops one session's subscription to key and reports whether
// it was the last.
func (g *Gateway) releaseSubscription(key subKey) bool {
	g.subMu.Lock()
	defer g.subMu.Unlock()
	g.subCount[key]--
	if g.subCount[key] > 0 {
		return false
	}
	delete(g.subCount, key)
	delete(g.pending, key)
	return true
}

// dropSubscriptions releases what an ending session subscribed to,
// unsubscribing downstream where it was the last subscriber.
func (g *Gateway) dropSubscriptions(s *session) {
	s.offers.mu.Lock()
	subs := s.offers.subs
	s.offers.subs = nil
	s.offers.mu.Unlock()
	var last []subKey
	for key := range subs {
		if g.releaseSubscription(key) {
			last = append(last, key)
		}
	}
	h := g.host
	if len(last) == 0 || h == nil {
		return
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		ctx, cancel := context.WithTimeout(g.ctx, unsubscribeTimeout)
		defer cancel()
		for _, key := range last {
			res := h.Pipeline().Do(ctx, pipeline.Request{Kind: pipeline.ResourceUnsubscribe, Server: key.server, URI: key.uri})
			if res.Err != nil {
				g.log.Debug("unsubscribing after the last session ended", "server", key.server, "error", res.Err)
			}
		}
	}()
}

// ForwardResourceUpdated takes a downstream server's
// notifications/resources/updated (a host.Listener, see New). It
// never blocks: the update is queued, coalesced, for deliverUpdates.
// Updates for resources no session subscribed to are dropped.
func (g *Gateway) ForwardResourceUpdated(server, uri string) {
	key := subKey{server: server, uri: uri}
	g.subMu.Lock()
	if g.subCount[key] == 0 {
		g.subMu.Unlock()
		return
	}
	if g.pending == nil {
		g.pending = map[subKey]bool{}
	}
	g.pending[key] = true
	g.subMu.Unlock()
	g.poke()
}

// deliverUpdates sends queued updates to the sessions that subscribed,
// each under the URI that session used.
func (g *Gateway) deliverUpdates() {
	defer g.wg.Done()
	g.poke() // creates wake
	g.subMu.Lock()
	wake := g.wake
	g.subMu.Unlock()
	for {
		select {
		case <-g.ctx.Done():
			return
		case <-wake:
		}
		g.subMu.Lock()
		pending := g.pending
		g.pending = nil
		g.subMu.Unlock()
		if len(pending) == 0 {
			continue
		}
		for _, s := range g.snapshot() {
			s.offers.mu.Lock()
			var uris []string
			for key := range pending {
				if up, ok := s.offers.subs[key]; ok {
					uris = append(uris, up)
				}
			}
			s.offers.mu.Unlock()
			for _, up := range uris {
				if err := s.server.ResourceUpdated(s.ctx, &mcp.ResourceUpdatedNotificationParams{URI: up}); err != nil {
					s.log.Debug("delivering resources/updated", "uri", up, "error", err)
				}
			}
		}
	}
}
