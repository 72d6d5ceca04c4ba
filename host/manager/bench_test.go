package manager_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/environment"
	"github.com/toolgate/toolgate/host/launch"
	"github.com/toolgate/toolgate/host/manager"
	"github.com/toolgate/toolgate/internal/testbin"
)

// BenchmarkStartup measures concurrent startup of 20 stdio servers
// against the slowest of the same servers started alone, in the same run.
// The ratio (x_vs_slowest_single) is what matters: 1.0 would be perfect
// concurrency; the machine's cores bound it from below.
func BenchmarkStartup(b *testing.B) {
	servers := make([]config.Server, 20)
	for i := range servers {
		servers[i] = demoB(b, fmt.Sprintf("s%02d", i))
	}
	startAll := func(ss []config.Server) time.Duration {
		cfg := &config.Config{Servers: ss}
		m := manager.New(cfg, manager.Options{
			Environments: environment.New(cfg, environment.Options{Local: launch.NewLocal(launch.LocalOptions{})}),
		})
		began := time.Now()
		m.Start(b.Context())
		sum, err := m.WaitStartup(b.Context())
		took := time.Since(began)
		if err != nil || len(sum.Ready) != len(ss) {
			b.Fatalf("startup: %v %+v", err, sum)
		}
		_ = m.Close()
		return took
	}
	var all, slowest time.Duration
	for b.Loop() {
		var worst time.Duration
		for _, s := range servers {
			worst = max(worst, startAll([]config.Server{s}))
		}
		slowest += worst
		all += startAll(servers)
	}
	n := float64(b.N)
	b.ReportMetric(float64(all.Microseconds())/n/1000, "ms_20_concurrent")
	b.ReportMetric(float64(slowest.Microseconds())/n/1000, "ms_slowest_single")
	b.ReportMetric(float64(all)/float64(slowest), "x_vs_slowest_single")
}

func demoB(b *testing.B, name string) config.Server {
	return config.Server{
		Name: name, Transport: config.TransportStdio, Command: testbin.Path(b, "mcp-demo"),
		Enabled: true, StartupTimeout: 30 * time.Second, ToolTimeout: 30 * time.Second, Prefix: true,
	}
}
