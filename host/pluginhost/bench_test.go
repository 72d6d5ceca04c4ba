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
	"github.com/toolgate/toolgate/sdk/launcher"
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
// (hook-allow, a real process, over go-plugin's gRPC) adds to one
// approval decision: the same call is decided by a procedure whose user
// step answers at once (no hook), and by one whose hook plugin approves
// it, alternating in one run. added-p50-us is the difference of the
// medians. sdk-p50-us is a bare SDK client call to another hook-allow
// process (no procedure, no adapter), the transport's share of it.
func BenchmarkHookDecision(b *testing.B) {
	cfg := loadConfig(b, fmt.Sprintf(`
plugin "allow" {
  kind = "hook"
  path = %q
}
`, bin("hook-allow")))
	h, _ := newHost(b, cfg, pluginhost.Options{Logger: hclog.NewNullLogger()})
	withHook := approval.New(approval.Options{Hooks: h.Hooks()})
	without := approval.New(approval.Options{Asker: allowAsker{&asker{}}})
	bare, err := plugintest.StartBinary(b, bin("hook-allow"), sdk.KindHook, plugintest.BinaryOptions{
		Logger: hclog.NewNullLogger(), LogLevel: "off",
	})
	if err != nil {
		b.Fatal(err)
	}
	sdkClient := bare.Plugin.(*hook.Client)
	ctx := context.Background()
	sdkCall := func() time.Duration {
		start := time.Now()
		if _, err := sdkClient.PermissionRequest(ctx, hook.Request{Server: "files", Tool: "write_file", Arguments: request.Arguments}); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	decide := func(p *approval.Procedure) time.Duration {
		start := time.Now()
		if d := p.Decide(ctx, request); !d.Approved {
			b.Fatalf("not approved: %+v", d)
		}
		return time.Since(start)
	}
	for range 200 {
		decide(without)
		decide(withHook)
		sdkCall()
	}
	var base, hooked, raw []time.Duration
	for b.Loop() {
		base = append(base, decide(without))
		hooked = append(hooked, decide(withHook))
		raw = append(raw, sdkCall())
	}
	b.ReportMetric(float64(median(raw).Nanoseconds())/1e3, "sdk-p50-us")
	b.ReportMetric(float64(median(base).Nanoseconds())/1e3, "nohook-p50-us")
	b.ReportMetric(float64(median(hooked).Nanoseconds())/1e3, "hook-p50-us")
	b.ReportMetric(float64((median(hooked)-median(base)).Nanoseconds())/1e3, "added-p50-us")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkMCPCallOverLauncherPlugin compares a tools/call (mcp-demo's
// echo) through a real manager to a server started by the built-in local
// launcher and to the same server started through the launcher-local
// plugin, with the process's pipes handed to the host (Linux) and with
// its I/O on the launch stream only (launcher.ClientOptions.StreamOnly),
// alternating in one run. The ratios of the medians: launcher/local-p50
// (the default mode, target ≤ 1.3), stream/local-p50 and stream/fds-p50.
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
	hs, _ := newHost(b, cfg, pluginhost.Options{Logger: hclog.NewNullLogger(), Launcher: launcher.ClientOptions{StreamOnly: true}})
	ms := startManager(b, cfg, hs)
	for _, size := range []int{1 << 10, 64 << 10} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			benchCalls(b, strings.Repeat("x", size), []benchTarget{
				{"local", m, "local"}, {"launcher", m, "plugin"}, {"stream", ms, "plugin"},
			})
		})
	}
}

// benchTarget is one server a benchmark calls, by its manager.
type benchTarget struct {
	label  string
	m      *manager.Manager
	server string
}

// benchCalls calls each target in turn every iteration and reports the
// median of each and its ratio to the first target's, plus stream/fds.
func benchCalls(b *testing.B, text string, targets []benchTarget) {
	ctx := context.Background()
	call := func(t benchTarget) time.Duration {
		start := time.Now()
		res, err := t.m.CallTool(ctx, t.server, "echo", map[string]any{"text": text}, nil, mcpclient.CallOptions{})
		if err != nil || res.IsError {
			b.Fatalf("%s: %v", t.label, err)
		}
		return time.Since(start)
	}
	for range 200 {
		for _, t := range targets {
			call(t)
		}
	}
	ds := make([][]time.Duration, len(targets))
	for b.Loop() {
		for i, t := range targets {
			ds[i] = append(ds[i], call(t))
		}
	}
	medians := map[string]time.Duration{}
	for i, t := range targets {
		medians[t.label] = median(ds[i])
		b.ReportMetric(float64(medians[t.label].Nanoseconds())/1e3, t.label+"-p50-us")
		if i > 0 {
			b.ReportMetric(float64(medians[t.label])/float64(median(ds[0])), t.label+"/"+targets[0].label+"-p50")
		}
	}
	if fds, ok := medians["launcher"]; ok && medians["stream"] > 0 {
		b.ReportMetric(float64(medians["stream"])/float64(fds), "stream/fds-p50")
	}
}
