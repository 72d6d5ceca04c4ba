package gateway_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/gateway"
	"github.com/toolgate/toolgate/host/mcpclient"
	"github.com/toolgate/toolgate/testplugins/mcpdemo"
)

// TestHugeDescriptions: a server with three 4 MiB descriptions (mcp-demo
// --huge-descriptions) reaches clients with each description cut to the
// default cap and a marker; when its block lets them through
// (max_description_bytes = 16 MiB), no tools/list page the gateway
// serves is much over MaxToolsListPageBytes, and following the cursor
// still yields every tool.
func TestHugeDescriptions(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		maxDesc    int
	}{
		{"default cap", "", mcpclient.DefaultMaxDescriptionBytes},
		{"raised cap", "max_description_bytes = 16777216", mcpdemo.HugeDescriptionBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := filepath.Join(t.TempDir(), "calls.jsonl")
			f := newFixture(t, "exposure { mode = \"direct\" }\n",
				demoServer(t, "demo", calls, tc.body, "--no-default-tools", "--huge-descriptions"))
			cs := f.connectHTTP(t, nil)
			var names []string
			cursor := ""
			for pages := 0; ; pages++ {
				if pages > 10 {
					t.Fatal("the cursor does not end")
				}
				res, err := cs.ListTools(t.Context(), &mcp.ListToolsParams{Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				page, _ := json.Marshal(res.Tools)
				if len(page) > gateway.MaxToolsListPageBytes+mcpdemo.HugeDescriptionBytes+64<<10 {
					t.Errorf("a page of %d bytes", len(page))
				}
				if len(res.Tools) > 1 && len(page) > gateway.MaxToolsListPageBytes {
					t.Errorf("a page of %d tools and %d bytes, over the cap", len(res.Tools), len(page))
				}
				for _, tl := range res.Tools {
					names = append(names, tl.Name)
					if len(tl.Description) > tc.maxDesc {
						t.Errorf("%s: description of %d bytes, cap %d", tl.Name, len(tl.Description), tc.maxDesc)
					}
					if tc.maxDesc < mcpdemo.HugeDescriptionBytes && !strings.HasSuffix(tl.Description, "[truncated by toolgate]") {
						t.Errorf("%s: the cut description has no marker", tl.Name)
					}
				}
				if cursor = res.NextCursor; cursor == "" {
					break
				}
			}
			if len(names) != 3 {
				t.Errorf("listed %v, want the three huge tools", names)
			}
		})
	}
}
