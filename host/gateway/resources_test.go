package gateway_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/gateway"
	"github.com/toolgate/toolgate/host/mcpclient"
	"github.com/toolgate/toolgate/internal/testwait"
)

// TestResourcesAndPromptsPassThrough: two servers list the same resource
// URIs and templates; upstream gets both, each under a reversible
// rewrite, reads and template reads reach the owner, prompts are named
// like tools, completions are forwarded and a resources/list_changed
// downstream reaches the client.
func TestResourcesAndPromptsPassThrough(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t, "",
		demoServer(t, "a", dir+"/a", "", "--resources", "2"),
		demoServer(t, "b", dir+"/b", "prefix = false", "--resources", "2"))
	changed := make(chan struct{}, 1)
	cs := f.connectHTTP(t, &mcp.ClientOptions{ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}})
	caps := cs.InitializeResult().Capabilities
	if caps.Resources == nil || !caps.Resources.Subscribe || !caps.Resources.ListChanged || caps.Prompts == nil || caps.Completions == nil {
		t.Fatalf("capabilities = %+v, want resources (subscribe, listChanged), prompts and completions", caps)
	}
	ctx := t.Context()
	rs, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range rs.Resources {
		uris = append(uris, r.URI)
	}
	want := "toolgate://a/demo://doc/00001 toolgate://a/demo://doc/00002 toolgate://b/demo://doc/00001 toolgate://b/demo://doc/00002"
	if got := strings.Join(sorted(uris), " "); got != want {
		t.Fatalf("resources = %s\nwant %s (both servers list the same URIs: each is rewritten, none dropped)", got, want)
	}
	for _, u := range uris {
		if server, raw, ok := gateway.SplitURI(u); !ok || !strings.HasPrefix(u, "toolgate://"+server+"/") || raw == "" {
			t.Errorf("SplitURI(%q) = %q, %q, %v", u, server, raw, ok)
		}
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "toolgate://b/demo://doc/00002"})
	if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "document 2" || read.Contents[0].URI != "toolgate://b/demo://doc/00002" {
		t.Fatalf("read = %+v, %v", read, err)
	}
	read, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "toolgate://a/demo://item/7"})
	if err != nil || read.Contents[0].Text != "item 7" || read.Contents[0].URI != "toolgate://a/demo://item/7" {
		t.Fatalf("template read = %+v, %v", read, err)
	}
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "toolgate://a/demo://nothing"})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != mcp.CodeResourceNotFound {
		t.Fatalf("reading an unknown resource = %v, want code %d", err, mcp.CodeResourceNotFound)
	}

	ps, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range ps.Prompts {
		names = append(names, p.Name)
	}
	if got := strings.Join(sorted(names), " "); got != "greet mcp__a__greet" {
		t.Fatalf("prompts = %s, want greet (b, prefix = false) and mcp__a__greet", got)
	}
	got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp__a__greet", Arguments: map[string]string{"name": "Ada"}})
	if err != nil || got.Messages[0].Content.(*mcp.TextContent).Text != "Say hello to Ada." {
		t.Fatalf("GetPrompt = %+v, %v", got, err)
	}
	done, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "greet"},
		Argument: mcp.CompleteParamsArgument{Name: "name", Value: "b"}})
	if err != nil || strings.Join(done.Completion.Values, ",") != "bob" {
		t.Fatalf("Complete = %+v, %v", done, err)
	}

	if _, err := f.h.Manager.CallTool(ctx, "b", "add_resource", map[string]any{"uri": "demo://only-b", "text": "b's own"}, nil, mcpclient.CallOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.Recv(t, changed, "resources/list_changed after a server added a resource")
	read, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://only-b"})
	if err != nil || read.Contents[0].Text != "b's own" {
		t.Fatalf("a URI only one server lists is served as is: read = %+v, %v", read, err)
	}
}

// TestResourceUpdatesReachOnlyTheSubscriber: of two sessions, the one
// that subscribed gets resources/updated under the URI it subscribed to;
// the other, subscribed to another resource, gets only its own.
func TestResourceUpdatesReachOnlyTheSubscriber(t *testing.T) {
	f := newFixture(t, "", demoServer(t, "docs", t.TempDir()+"/calls", "prefix = false", "--resources", "2"))
	listen := func() (*mcp.ClientSession, chan string) {
		got := make(chan string, 16)
		cs := f.connectHTTP(t, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			got <- r.Params.URI
		}})
		return cs, got
	}
	one, toOne := listen()
	two, toTwo := listen()
	ctx := t.Context()
	if err := one.Subscribe(ctx, &mcp.SubscribeParams{URI: "demo://doc/00001"}); err != nil {
		t.Fatal(err)
	}
	if err := two.Subscribe(ctx, &mcp.SubscribeParams{URI: "demo://doc/00002"}); err != nil {
		t.Fatal(err)
	}
	touch := func(uri string) {
		if _, err := f.h.Manager.CallTool(ctx, "docs", "touch_resource", map[string]any{"uri": uri}, nil, mcpclient.CallOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	touch("demo://doc/00001")
	if u := testwait.Recv(t, toOne, "the subscriber's update for demo://doc/00001"); u != "demo://doc/00001" {
		t.Fatalf("subscriber got an update for %q", u)
	}
	touch("demo://doc/00002")
	if u := testwait.Recv(t, toTwo, "the second session's update for demo://doc/00002"); u != "demo://doc/00002" {
		t.Fatalf("the second session got an update for %q, which it never subscribed to", u)
	}
	// The negative, without waiting for something that must not come:
	// updates are delivered in order, one round after the other, so an
	// update of 00002 wrongly sent to the first session would reach it
	// before the update of 00001 touched now. The next update the first
	// session gets must therefore be 00001.
	touch("demo://doc/00001")
	if u := testwait.Recv(t, toOne, "the subscriber's second update for demo://doc/00001"); u != "demo://doc/00001" {
		t.Fatalf("the first session got an update for %q, which it never subscribed to", u)
	}
	if err := one.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "demo://doc/00001"}); err != nil {
		t.Fatal(err)
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestResourceUpdateStormNeverBlocks: a server that sends a storm of
// resources/updated while the subscribed client does not read them
// holds nothing up: each update is taken at once and coalesced, and the
// client still gets an update once it reads again.
func TestResourceUpdateStormNeverBlocks(t *testing.T) {
	f := newFixture(t, "", demoServer(t, "docs", t.TempDir()+"/calls", "prefix = false", "--resources", "1"))
	release := make(chan struct{})
	got := make(chan string, 1)
	cs := f.connectHTTP(t, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
		<-release
		select {
		case got <- r.Params.URI:
		default:
		}
	}})
	if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "demo://doc/00001"}); err != nil {
		t.Fatal(err)
	}
	for range 100000 {
		f.gw.ForwardResourceUpdated("docs", "demo://doc/00001")
		f.gw.ForwardResourceUpdated("docs", "demo://not-subscribed")
	}
	close(release)
	if u := testwait.Recv(t, got, "an update after the storm"); u != "demo://doc/00001" {
		t.Fatalf("update for %q", u)
	}
}
