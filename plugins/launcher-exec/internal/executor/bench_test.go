package executor_test

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/sdk/launcher"
)

// BenchmarkCallOverLauncherExec compares an MCP tools/call (mcp-demo's
// echo of a 1 KiB text) through the real toolgate-launcher-exec binary
// (executor "local"; go-plugin, AutoMTLS, the launch stream) with the same
// call over the child's own stdio pipes (go-sdk's CommandTransport), in
// the same run, alternating so that both see the same machine. It reports
// the p50 and p99 of each and the ratio of the medians
// (exec/pipe-p50); ns/op is the sum of both calls.
func BenchmarkCallOverLauncherExec(b *testing.B) {
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	cmd := procwatch.DieWithTest(exec.Command(demo(b)))
	cmd.Env = []string{"GORACE=atexit_sleep_ms=0"}
	direct, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = direct.Close() })

	plug := binary(b, map[string]any{"executor": "local"})
	viaExec := connect(b, plug.Plugin.(*launcher.Client), launcher.Spec{Server: "bench", Command: demo(b), Env: baseEnv(nil)})

	text := strings.Repeat("x", 1024)
	call := func(cs *mcp.ClientSession) time.Duration {
		start := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
		if err != nil || res.IsError {
			b.Fatalf("echo: %v %+v", err, res)
		}
		return time.Since(start)
	}
	for range 200 { // warm up both paths
		call(direct)
		call(viaExec.ClientSession)
	}
	var pipe, stream []time.Duration
	for b.Loop() {
		pipe = append(pipe, call(direct))
		stream = append(stream, call(viaExec.ClientSession))
	}
	pipeP50, streamP50 := percentile(pipe, 50), percentile(stream, 50)
	b.ReportMetric(float64(pipeP50.Nanoseconds()), "pipe-p50-ns")
	b.ReportMetric(float64(percentile(pipe, 99).Nanoseconds()), "pipe-p99-ns")
	b.ReportMetric(float64(streamP50.Nanoseconds()), "exec-p50-ns")
	b.ReportMetric(float64(percentile(stream, 99).Nanoseconds()), "exec-p99-ns")
	b.ReportMetric(float64(streamP50)/float64(pipeP50), "exec/pipe-p50")
}

func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}
