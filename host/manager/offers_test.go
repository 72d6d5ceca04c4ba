package manager_test

import (
	"errors"
	"testing"

	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/manager"
	"github.com/toolgate/toolgate/host/mcpclient"
	"github.com/toolgate/toolgate/internal/testwait"
)

// TestResourcesAndPromptsJoinTheCatalog: a server's resources, templates
// and prompts are listed at start, filtered by its block, routed by
// server, and listed again on resources/list_changed with a new revision.
func TestResourcesAndPromptsJoinTheCatalog(t *testing.T) {
	docs := demo(t, "docs", "--resources", "3")
	docs.DisabledResources = []string{"demo://doc/00002"}
	docs.DisabledPrompts = []string{"nothing*"}
	f := start(t, docs, demo(t, "plain"))

	cat := f.m.Snapshot()
	var uris []string
	for _, r := range cat.Resources {
		if r.Server != "docs" {
			t.Errorf("resource %q of server %q; plain offers none", r.Resource.URI, r.Server)
		}
		uris = append(uris, r.Resource.URI)
	}
	if len(uris) != 2 || uris[0] != "demo://doc/00001" || uris[1] != "demo://doc/00003" {
		t.Fatalf("catalog resources = %v, want 00001 and 00003 (00002 is disabled)", uris)
	}
	if len(cat.Templates) != 1 || cat.Templates[0].Template.URITemplate != "demo://item/{id}" {
		t.Fatalf("catalog templates = %+v", cat.Templates)
	}
	if len(cat.Prompts) != 1 || cat.Prompts[0].Prompt.Name != "greet" || cat.Prompts[0].Server != "docs" {
		t.Fatalf("catalog prompts = %+v", cat.Prompts)
	}
	if st := statusOf(f.m, "docs"); st.Resources != 2 || st.Prompts != 1 || st.Templates != 1 {
		t.Errorf("status = %+v, want 2 resources, 1 template, 1 prompt", st)
	}

	res, err := f.m.ReadResource(t.Context(), "docs", "demo://doc/00003")
	if err != nil || res.Contents[0].Text != "document 3" {
		t.Fatalf("ReadResource = %+v, %v", res, err)
	}
	if _, err := f.m.ReadResource(t.Context(), "docs", "demo://doc/00002"); !errors.Is(err, manager.ErrResourceDisabled) {
		t.Fatalf("reading a disabled resource = %v, want ErrResourceDisabled", err)
	}
	if _, err := f.m.GetPrompt(t.Context(), "docs", "greet", map[string]string{"name": "Ada"}); err != nil {
		t.Fatal(err)
	}

	rev := f.m.Revision()
	if _, err := f.m.CallTool(t.Context(), "docs", "add_resource", map[string]any{"uri": "demo://doc/new", "text": "new"}, nil, mcpclient.CallOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.rec.WaitFor(t.Context(), func(e events.Event) bool {
		s, ok := e.(events.ServerState)
		return ok && s.Server == "docs" && s.Revision > rev
	}); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range f.m.Snapshot().Resources {
		found = found || r.Resource.URI == "demo://doc/new"
	}
	if !found {
		t.Errorf("resources/list_changed did not bring the added resource into the catalog")
	}
}

// TestResourceUpdatesReachTheHost: after Subscribe, the server's
// resources/updated reaches Options.ResourceUpdated with its server.
func TestResourceUpdatesReachTheHost(t *testing.T) {
	type update struct{ server, uri string }
	got := make(chan update, 1)
	f := startWith(t, func(o *manager.Options) {
		o.ResourceUpdated = func(server, uri string) {
			select {
			case got <- update{server, uri}:
			default:
			}
		}
	}, demo(t, "docs", "--resources", "1"))
	if err := f.m.Subscribe(t.Context(), "docs", "demo://doc/00001"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.m.CallTool(t.Context(), "docs", "touch_resource", map[string]any{"uri": "demo://doc/00001"}, nil, mcpclient.CallOptions{}); err != nil {
		t.Fatal(err)
	}
	if u := testwait.Recv(t, got, "a resource update"); u != (update{"docs", "demo://doc/00001"}) {
		t.Fatalf("update = %+v", u)
	}
}

// TestSubscriptionsSurviveARestart: a server that crashed and came back
// is subscribed again before it is ready, so updates keep flowing.
func TestSubscriptionsSurviveARestart(t *testing.T) {
	got := make(chan string, 4)
	f := startWith(t, func(o *manager.Options) {
		o.ResourceUpdated = func(_, uri string) {
			select {
			case got <- uri:
			default:
			}
		}
	}, demo(t, "docs", "--resources", "1", "--crash-after", "1"))
	if err := f.m.Subscribe(t.Context(), "docs", "demo://doc/00001"); err != nil {
		t.Fatal(err)
	}
	// The first call's update arrives, then the server exits.
	if _, err := f.m.CallTool(t.Context(), "docs", "touch_resource", map[string]any{"uri": "demo://doc/00001"}, nil, mcpclient.CallOptions{}); err != nil {
		t.Fatal(err)
	}
	<-got
	if _, err := f.rec.WaitFor(t.Context(), func(e events.Event) bool {
		s, ok := e.(events.ServerState)
		return ok && s.Server == "docs" && s.Status == events.StatusReady && s.Restarts == 1
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.m.CallTool(t.Context(), "docs", "touch_resource", map[string]any{"uri": "demo://doc/00001"}, nil, mcpclient.CallOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.Recv(t, got, "an update after the restart (else the subscription was lost)")
}
