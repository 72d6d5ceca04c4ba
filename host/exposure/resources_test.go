package exposure_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/catalog"
	"github.com/toolgate/toolgate/host/exposure"
	"github.com/toolgate/toolgate/host/manager"
	"github.com/toolgate/toolgate/host/pipeline"
)

// fakeResources is a catalog with many resources and a reader.
type fakeResources struct {
	cat  *manager.Snapshot
	read []string
}

func (f *fakeResources) Snapshot() *manager.Snapshot { return f.cat }
func (f *fakeResources) ReadResource(_ context.Context, server, uri string) (*mcp.ReadResourceResult, error) {
	f.read = append(f.read, server+" "+uri)
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: uri, MIMEType: "text/plain", Text: strings.Repeat("x", 100000)},
		{URI: uri, MIMEType: "image/png", Blob: []byte("png")},
	}}, nil
}

// The rest of pipeline.Servers: the step never sends them.
func (f *fakeResources) GetPrompt(context.Context, string, string, map[string]string) (*mcp.GetPromptResult, error) {
	return nil, errors.New("not a prompt server")
}
func (f *fakeResources) Complete(context.Context, string, *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	return nil, errors.New("not a completion server")
}
func (f *fakeResources) Subscribe(context.Context, string, string) error {
	return errors.New("no subscriptions")
}
func (f *fakeResources) Unsubscribe(context.Context, string, string) error {
	return errors.New("no subscriptions")
}

// TestResourceToolsForTheModel: with resources in the catalog, the model
// gets list_mcp_resources (paged, per server), list_mcp_resource_templates
// and read_mcp_resource; a read result is projected like a tool result,
// within the output budget.
func TestResourceToolsForTheModel(t *testing.T) {
	cat := &manager.Snapshot{Servers: map[string]manager.ServerInfo{"a": {}, "b": {}}}
	for i := range 150 {
		cat.Resources = append(cat.Resources, catalog.ResourceInfo{Server: "a", Resource: &mcp.Resource{URI: fmt.Sprintf("a://%03d", i), Name: "r"}})
	}
	cat.Resources = append(cat.Resources, catalog.ResourceInfo{Server: "b", Resource: &mcp.Resource{URI: "b://only"}})
	f := &fakeResources{cat: cat}
	step := exposure.NewStep(exposure.Options{Snapshots: f, Pipeline: pipeline.New(pipeline.Options{Servers: f})})
	var names []string
	for _, tl := range step.Tools() {
		names = append(names, tl.ModelName)
	}
	if strings.Join(names, " ") != "list_mcp_resources list_mcp_resource_templates read_mcp_resource" {
		t.Fatalf("model tools = %v", names)
	}
	list := func(args string) (uris []string, next string) {
		t.Helper()
		res := step.Call(t.Context(), exposure.CallRequest{Name: "list_mcp_resources", Arguments: []byte(args)})
		var page struct {
			Resources  []struct{ Server, URI string }
			NextCursor string
		}
		if err := json.Unmarshal([]byte(res.Raw.Content[0].(*mcp.TextContent).Text), &page); err != nil || res.Raw.IsError {
			t.Fatalf("list %s: %v %+v", args, err, res.Raw)
		}
		for _, r := range page.Resources {
			uris = append(uris, r.Server+" "+r.URI)
		}
		return uris, page.NextCursor
	}
	first, next := list(`{}`)
	if len(first) != 100 || next == "" {
		t.Fatalf("first page: %d entries, cursor %q", len(first), next)
	}
	rest, next := list(`{"cursor":"` + next + `"}`)
	if len(rest) != 51 || next != "" || rest[50] != "b b://only" {
		t.Fatalf("second page: %d entries, cursor %q", len(rest), next)
	}
	only, _ := list(`{"server":"b"}`)
	if strings.Join(only, ",") != "b b://only" {
		t.Fatalf("server b's resources = %v", only)
	}
	bad := step.Call(t.Context(), exposure.CallRequest{Name: "list_mcp_resources", Arguments: []byte(`{"cursor":"zzz"}`)})
	if !bad.Raw.IsError {
		t.Fatalf("a bad cursor was accepted")
	}

	res := step.Call(t.Context(), exposure.CallRequest{Name: "read_mcp_resource", Arguments: []byte(`{"server":"a","uri":"a://007"}`)})
	if res.Raw.IsError || len(f.read) != 1 || f.read[0] != "a a://007" {
		t.Fatalf("read: %+v, reads %v", res.Raw, f.read)
	}
	out := res.Output()
	if len(out.Text) > 40000 || !strings.Contains(out.Text, "xxxx") {
		t.Errorf("a 100 kB resource reaches the model as %d bytes; want it within the output budget", len(out.Text))
	}
}
