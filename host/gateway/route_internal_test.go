package gateway

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/catalog"
	"github.com/toolgate/toolgate/host/manager"
)

// TestRouteByTemplate routes URIs no server lists by the templates that
// make them: the most specific template wins, and a URI a template cannot
// produce (a "/" where a simple expression stands) belongs to no one.
func TestRouteByTemplate(t *testing.T) {
	cat := &manager.Snapshot{Templates: []catalog.TemplateInfo{
		{Server: "items", Template: &mcp.ResourceTemplate{URITemplate: "demo://item/{id}"}},
		{Server: "search", Template: &mcp.ResourceTemplate{URITemplate: "demo://item/{id}/search{?q}"}},
		{Server: "files", Template: &mcp.ResourceTemplate{URITemplate: "file:///{+path}"}},
	}}
	p := buildOfferPlan(cat)
	for _, tt := range []struct {
		uri, server string
	}{
		{"demo://item/42", "items"},
		{"demo://item/42/search?q=blue", "search"},
		{"file:///etc/hosts", "files"},
		{"demo://item/a/b", ""},
		{"other://x", ""},
	} {
		r, _, ok := p.route(tt.uri)
		got := ""
		if ok {
			got = r.server
		}
		if got != tt.server {
			t.Errorf("route(%q) = %q, want %q", tt.uri, got, tt.server)
		}
	}
}
