package host_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/exposure"
	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testbin"
)

// BenchmarkCallPath measures one auto-approved call through the whole
// host — router, approval, execution, events — against a bare go-sdk
// client calling the same tool of the same kind of mcp-demo process, in
// the same run. The two paths alternate in blocks of 100 calls, so each is
// measured warm and neither pays for the other's process waking up. It
// reports p50/p99 of both and the p50 ratio (target ≤ 1.10×), without
// and with a JSONL audit log (three fsync-free appends per call).
func BenchmarkCallPath(b *testing.B) {
	for _, audit := range []bool{false, true} {
		name := "events"
		if audit {
			name = "events+audit"
		}
		b.Run(name, func(b *testing.B) { benchCallPath(b, audit) })
	}
}

func benchCallPath(b *testing.B, audit bool) {
	demo := testbin.Path(b, "mcp-demo")
	dir := b.TempDir()
	cfgPath := filepath.Join(dir, "toolgate.hcl")
	src := fmt.Sprintf("server \"demo\" {\n  command = %q\n}\n", demo)
	if audit {
		src = "audit_log = \"audit.jsonl\"\n" + src
	}
	if err := os.WriteFile(cfgPath, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	cfg, diags := config.Load(cfgPath, config.LoadOptions{})
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	h, err := host.New(cfg, host.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	h.Start(b.Context())
	if _, err := h.Manager.WaitStartup(b.Context()); err != nil {
		b.Fatal(err)
	}
	step := h.NewStep("")

	direct, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(b.Context(),
		&mcp.CommandTransport{Command: procwatch.DieWithTest(exec.Command(demo))}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	defer direct.Close()

	args := []byte(`{"text":"hello from the benchmark"}`)
	viaHost := func() time.Duration {
		t0 := time.Now()
		res := step.Call(b.Context(), exposure.CallRequest{Name: "mcp__demo__echo", Arguments: args})
		d := time.Since(t0)
		if res.Status != events.CallCompleted {
			b.Fatalf("host call: %s", res.Output().Text)
		}
		return d
	}
	sdkArgs := map[string]any{"text": "hello from the benchmark"}
	viaSDK := func() time.Duration {
		t0 := time.Now()
		res, err := direct.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: sdkArgs})
		d := time.Since(t0)
		if err != nil || res.IsError {
			b.Fatalf("direct call: %v", err)
		}
		return d
	}
	for range 100 { // warm both paths
		viaHost()
		viaSDK()
	}
	const block = 100
	var hostTimes, sdkTimes []time.Duration
	for i := 0; b.Loop(); i++ {
		if (i/block)%2 == 0 {
			hostTimes = append(hostTimes, viaHost())
		} else {
			sdkTimes = append(sdkTimes, viaSDK())
		}
	}
	if len(sdkTimes) == 0 {
		b.Skip("run with -benchtime of at least 200x to measure both paths")
	}
	reportLatency(b, "host", hostTimes, "sdk", sdkTimes)
}

// reportLatency reports p50/p99 of a measured path and its baseline, and
// the p50 ratio.
func reportLatency(b *testing.B, name string, got []time.Duration, baseName string, base []time.Duration) {
	reportPath(b, baseName, base)
	reportAgainst(b, name, got, base)
}

// reportPath reports p50/p99 of one path.
func reportPath(b *testing.B, name string, ds []time.Duration) {
	b.ReportMetric(us(quantile(ds, 0.50)), name+"_p50_us")
	b.ReportMetric(us(quantile(ds, 0.99)), name+"_p99_us")
}

// reportAgainst reports p50/p99 of a path and its p50 ratio to base.
func reportAgainst(b *testing.B, name string, got, base []time.Duration) {
	reportPath(b, name, got)
	b.ReportMetric(float64(quantile(got, 0.50))/float64(quantile(base, 0.50)), name+"_x_p50")
}

func quantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
