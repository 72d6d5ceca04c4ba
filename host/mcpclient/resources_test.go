package mcpclient

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolgate/toolgate/internal/testwait"
)

func TestResourcesPromptsAndCompletions(t *testing.T) {
	updated := make(chan string, 1)
	c := demoClientWith(t, Options{Handlers: Handlers{ResourceUpdated: func(uri string) {
		select {
		case updated <- uri:
		default:
		}
	}}}, "--resources", "7", "--page-size", "3")
	ctx := t.Context()
	rs, err := c.ListResources(ctx)
	if err != nil || len(rs) != 7 || rs[0].URI != "demo://doc/00001" || rs[6].URI != "demo://doc/00007" {
		t.Fatalf("ListResources over 3 pages = %d resources, %v; want demo://doc/00001..7", len(rs), err)
	}
	ts, err := c.ListResourceTemplates(ctx)
	if err != nil || len(ts) != 1 || ts[0].URITemplate != "demo://item/{id}" {
		t.Fatalf("ListResourceTemplates = %v, %v", ts, err)
	}
	ps, err := c.ListPrompts(ctx)
	if err != nil || len(ps) != 1 || ps[0].Name != "greet" {
		t.Fatalf("ListPrompts = %v, %v", ps, err)
	}
	read, err := c.ReadResource(ctx, "demo://doc/00004")
	if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "document 4" {
		t.Fatalf("ReadResource = %+v, %v", read, err)
	}
	read, err = c.ReadResource(ctx, "demo://item/42")
	if err != nil || read.Contents[0].Text != "item 42" {
		t.Fatalf("ReadResource through the template = %+v, %v", read, err)
	}
	got, err := c.GetPrompt(ctx, "greet", map[string]string{"name": "Ada"})
	if err != nil || len(got.Messages) != 1 || got.Messages[0].Content.(*mcp.TextContent).Text != "Say hello to Ada." {
		t.Fatalf("GetPrompt = %+v, %v", got, err)
	}
	done, err := c.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "greet"},
		Argument: mcp.CompleteParamsArgument{Name: "name", Value: "al"}})
	if err != nil || strings.Join(done.Completion.Values, ",") != "alice,albert" {
		t.Fatalf("Complete = %+v, %v", done, err)
	}
	if err := c.Subscribe(ctx, "demo://doc/00002"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "touch_resource", Arguments: map[string]any{"uri": "demo://doc/00002"}}, CallOptions{}); err != nil {
		t.Fatal(err)
	}
	if uri := testwait.Recv(t, updated, "resources/updated after subscribing"); uri != "demo://doc/00002" {
		t.Fatalf("resources/updated for %q", uri)
	}
	if err := c.Unsubscribe(ctx, "demo://doc/00002"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadResource(ctx, "demo://nothing"); err == nil || !strings.Contains(err.Error(), "demo://nothing") {
		t.Fatalf("reading an unknown resource = %v, want an error naming it", err)
	}
}

func TestResourceListingLimits(t *testing.T) {
	t.Run("repeated cursor", func(t *testing.T) {
		c := demoClient(t, "--resources", "3", "--page-size", "1", "--repeat-cursor")
		_, err := c.ListResources(t.Context())
		if !errors.Is(err, ErrCatalogLimit) || !strings.Contains(err.Error(), "repeated cursor") || !strings.Contains(err.Error(), "resources") {
			t.Fatalf("ListResources = %v, want the repeated-cursor limit", err)
		}
	})
	t.Run("too many pages", func(t *testing.T) {
		c := demoClient(t, "--resources", fmt.Sprint(MaxPages+1), "--page-size", "1")
		_, err := c.ListResources(t.Context())
		if !errors.Is(err, ErrCatalogLimit) || !strings.Contains(err.Error(), fmt.Sprintf("more than %d pages", MaxPages)) {
			t.Fatalf("ListResources = %v", err)
		}
	})
}
