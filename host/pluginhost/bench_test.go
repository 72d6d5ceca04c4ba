package pluginhost_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/manager"
	"github.com/toolgate/toolgate/host/mcpclient"
	"github.com/toolgate/toolgate/host/pluginhost"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/hook"
	"github.com/toolgate/toolgate/sdk/plugintest"
)

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

type allowAsker struct{ *asker }

func (allowAsker) AskApproval(context.Context, approval.Prompt) (approval.Choice, error) {
	return approval.ChoiceAllow, nil
}

// BenchmarkHookDecision measures what a PermissionRequest hook plugin
// (hook-allow, a real process) adds to one approval decision: the same
// call is decided by a procedure whose user step answers at once (no
// hook), by one whose hook the host reaches over the direct lane (the
// default where plugins offer it), and by one whose hook it reaches over
// gRPC (Options.NoLane), alternating in one run. added-p50-us is the
// lane's difference of the medians (target ≤ 150 µs); grpc-added-p50-us
// is gRPC's, and lane/grpc-p50 their ratio.
func BenchmarkHookDecision(b *testing.B) {
	cfg := loadConfig(b, fmt.Sprintf(`
plugin "allow" {
  kind = "hook"
  path = %q
}
`, bin("hook-allow")))
	laneHost, _ := newHost(b, cfg, pluginhost.Options{Logger: hclog.NewNullLogger()})
	grpcHost, _ := newHost(b, cfg, pluginhost.Options{Logger: hclog.NewNullLogger(), NoLane: true})
	overLane := approval.New(approval.Options{Hooks: laneHost.Hooks()})
	overGRPC := approval.New(approval.Options{Hooks: grpcHost.Hooks()})
	without := approval.New(approval.Options{Asker: allowAsker{&asker{}}})
	ctx := context.Background()
	decide := func(p *approval.Procedure) time.Duration {
		start := time.Now()
		if d := p.Decide(ctx, request); !d.Approved {
			b.Fatalf("not approved: %+v", d)
		}
		return time.Since(start)
	}
	for range 200 {
		decide(without)
		decide(overLane)
		decide(overGRPC)
	}
	if laneHost.Status()[0].Lane != wantLane || grpcHost.Status()[0].Lane {
		b.Fatalf("lanes: %v and %v, want %v and false", laneHost.Status()[0].Lane, grpcHost.Status()[0].Lane, wantLane)
	}
	var base, lane, grpc []time.Duration
	for b.Loop() {
		base = append(base, decide(without))
		lane = append(lane, decide(overLane))
		grpc = append(grpc, decide(overGRPC))
	}
	b.ReportMetric(float64(median(base).Nanoseconds())/1e3, "nohook-p50-us")
	b.ReportMetric(float64((median(lane)-median(base)).Nanoseconds())/1e3, "added-p50-us")
	b.ReportMetric(float64((median(grpc)-median(base)).Nanoseconds())/1e3, "grpc-added-p50-us")
	b.ReportMetric(float64(median(lane))/float64(median(grpc)), "lane/grpc-p50")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkHookProcessors is the measurement behind hook.Serve's default
// of one processor: the same PermissionRequest to two hook-allow
// processes, one as served (GOMAXPROCS=1) and one given GOMAXPROCS=2 (the
// Go default on this class of machine), alternating in one run.
// one/two-p50 below 1 is the default's gain.
func BenchmarkHookProcessors(b *testing.B) {
	start := func(env ...string) *hook.Client {
		p, err := plugintest.StartBinary(b, bin("hook-allow"), sdk.KindHook, plugintest.BinaryOptions{
			Logger: hclog.NewNullLogger(), LogLevel: "off", Env: env,
		})
		if err != nil {
			b.Fatal(err)
		}
		return p.Plugin.(*hook.Client)
	}
	one, two := start(), start("GOMAXPROCS=2")
	ctx := context.Background()
	call := func(c *hook.Client) time.Duration {
		start := time.Now()
		if _, err := c.PermissionRequest(ctx, hook.Request{Server: "files", Tool: "write_file", Arguments: request.Arguments}); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	for range 300 {
		call(one)
		call(two)
	}
	var p1, p2 []time.Duration
	for b.Loop() {
		p1 = append(p1, call(one))
		p2 = append(p2, call(two))
	}
	b.ReportMetric(float64(median(p1).Nanoseconds())/1e3, "one-p50-us")
	b.ReportMetric(float64(median(p2).Nanoseconds())/1e3, "two-p50-us")
	b.ReportMetric(float64(median(p1))/float64(median(p2)), "one/two-p50")
}

// BenchmarkMCPCallOverLauncherPlugin compares a tools/call (mcp-demo's
// echo) through a real manager to a server started by the built-in local
// launcher and to the same server started through the launcher-local
// plugin, alternating in one run. launcher/local-p50 is the ratio of the
// medians (target ≤ 1.3).
func BenchmarkMCPCallOverLauncherPlugin(b *testing.B) {
	demo := testbin.Path(b, "mcp-demo")
	cfg := loadConfig(b, fmt.Sprintf(`
plugin "exec" {
  kind = "launcher"
  path = %q
}
environment "viaplugin" {
  launcher = "exec"
}
server "local" {
  command  = %q
  required = true
}
server "plugin" {
  command     = %q
  environment = "viaplugin"
  required    = true
}
`, bin("launcher-local"), demo, demo))
	h, _ := newHost(b, cfg, pluginhost.Options{Logger: hclog.NewNullLogger()})
	m := startManager(b, cfg, h)
	for _, size := range []int{1 << 10, 64 << 10} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			benchCalls(b, m, strings.Repeat("x", size))
		})
	}
}

func benchCalls(b *testing.B, m *manager.Manager, text string) {
	ctx := context.Background()
	call := func(server string) time.Duration {
		start := time.Now()
		res, err := m.CallTool(ctx, server, "echo", map[string]any{"text": text}, nil, mcpclient.CallOptions{})
		if err != nil || res.IsError {
			b.Fatalf("%s: %v", server, err)
		}
		return time.Since(start)
	}
	for range 200 {
		call("local")
		call("plugin")
	}
	var local, plugin []time.Duration
	for b.Loop() {
		local = append(local, call("local"))
		plugin = append(plugin, call("plugin"))
	}
	b.ReportMetric(float64(median(local).Nanoseconds())/1e3, "local-p50-us")
	b.ReportMetric(float64(median(plugin).Nanoseconds())/1e3, "launcher-p50-us")
	b.ReportMetric(float64(median(plugin))/float64(median(local)), "launcher/local-p50")
}
