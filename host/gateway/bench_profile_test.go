package gateway_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
)

// BenchmarkInProcessCall is one echo call through the gateway served in
// this process (Streamable HTTP in, stdio mcp-demo out, approval chain
// on, no audit log), so that -cpuprofile and -memprofile see the
// gateway's own work per call beside the client's; the process
// benchmarks above cannot be profiled from here. Read its profile with
// -focus on the gateway, host and go-sdk server packages.
func BenchmarkInProcessCall(b *testing.B) {
	for _, tc := range []struct {
		name    string
		noAudit bool
	}{{"audit-off", true}, {"audit-on", false}} {
		b.Run(tc.name, func(b *testing.B) {
			f := newFixtureWith(b, fixtureOptions{noAuditLog: tc.noAudit}, "")
			cs := f.connectTo(b, f.httpServer(b, config.Serve{}, nil), nil)
			params := &mcp.CallToolParams{Name: "mcp__demo__echo", Arguments: map[string]any{"text": "hello"}}
			b.ReportAllocs()
			for b.Loop() {
				res, err := cs.CallTool(context.Background(), params)
				if err != nil || res.IsError {
					b.Fatalf("%v %v", err, res)
				}
			}
		})
	}
}
