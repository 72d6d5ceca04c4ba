package catalog

import (
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMayClaimCoversEveryWayAServerChangesAName: whenever adding a
// server's tools changes the name of an existing tool or takes it,
// MayClaim says so for that server.
func TestMayClaimCoversEveryWayAServerChangesAName(t *testing.T) {
	tool := func(server, name string) RawTool { return RawTool{Server: server, Tool: &mcp.Tool{Name: name}} }
	for _, tt := range []struct {
		name     string
		existing []RawTool
		added    RawTool
	}{
		{"namespaces sanitize alike", []RawTool{tool("a-b", "x")}, tool("a_b", "y")},
		{"names collide once joined", []RawTool{tool("a", "b__c")}, tool("a__b", "c")},
		{"same server name twice sanitized", []RawTool{tool("files", "read")}, tool("files.", "read")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := Normalize(tt.existing, Options{})
			after := Normalize(append(tt.existing, tt.added), Options{})
			for _, b := range before {
				changed := true
				for _, a := range after {
					if a.Server == b.Server && a.Tool.Name == b.Tool.Name && a.ModelName == b.ModelName {
						changed = false
					}
				}
				if changed && !MayClaim(tt.added.Server, false, b.ModelName) {
					t.Errorf("adding %s changed %s, but MayClaim(%q, %q) = false", tt.added.Server, b.ModelName, tt.added.Server, b.ModelName)
				}
			}
		})
	}
	if MayClaim("other", false, "mcp__files__read") {
		t.Error("an unrelated prefixed server claims mcp__files__read")
	}
	if !MayClaim("other", true, "mcp__files__read") {
		t.Error("an unprefixed server can name a tool anything; MayClaim must say so")
	}
	// The test above must see changes at all.
	got := Normalize([]RawTool{tool("a-b", "x"), tool("a_b", "y")}, Options{})
	if fmt.Sprint(got[0].ModelName) == "mcp__a_b__x" {
		t.Fatal("colliding namespaces were not hashed; the test cannot see what MayClaim must cover")
	}
}
