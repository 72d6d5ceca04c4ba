package plugins_test

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/launcher"
	"github.com/toolgate/toolgate/sdk/plugintest"
)

// BenchmarkMCPCallOverLauncher compares an MCP tools/call (mcp-demo's echo
// of a 1 KiB text) through the launcher-local plugin, started as a real
// process with AutoMTLS like the host starts it, with the same call over
// the child's own stdio pipes (go-sdk's CommandTransport), in the same
// run, alternating. It reports each median and their ratio
// (launcher/pipe-p50); ns/op is the sum of both calls.
func BenchmarkMCPCallOverLauncher(b *testing.B) {
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)

	cmd := procwatch.DieWithTest(exec.Command(testbin.Path(b, "mcp-demo")))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	direct, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = direct.Close() })

	l := plugintest.RunBinary(b, bin("launcher-local"), sdk.KindLauncher).(*launcher.Client)
	viaLauncher := connectOverLauncher(b, l)

	text := strings.Repeat("x", 1024)
	call := func(cs *mcp.ClientSession) time.Duration {
		start := time.Now()
		got, err := echoText(ctx, cs, text)
		if err != nil || got != text {
			b.Fatalf("echo: %v", err)
		}
		return time.Since(start)
	}
	for range 200 {
		call(direct)
		call(viaLauncher)
	}
	var pipe, stream []time.Duration
	for b.Loop() {
		pipe = append(pipe, call(direct))
		stream = append(stream, call(viaLauncher))
	}
	pipeP50, streamP50 := median(pipe), median(stream)
	b.ReportMetric(float64(pipeP50.Nanoseconds()), "pipe-p50-ns")
	b.ReportMetric(float64(streamP50.Nanoseconds()), "launcher-p50-ns")
	b.ReportMetric(float64(streamP50)/float64(pipeP50), "launcher/pipe-p50")
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
