package launcher_test

import (
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/toolgate/toolgate/sdk/internal/wire"
	"github.com/toolgate/toolgate/sdk/launcher"
)

// BenchmarkLauncherEcho compares a 1 KiB line's round trip through an echo
// child launched by a launcher plugin (in-process plugin, real gRPC on a
// unix socket with the settings plugins serve and hosts dial with, no
// TLS), with its I/O on the launch stream and with its pipes passed to
// the host (where the system can), against the same round trip over plain
// os.Pipe pipes to the same kind of child, in the same run. Iterations
// alternate between the three so that all see the same machine state. It
// reports the p50 and p99 of each and the ratios of the medians
// (stream/pipe-p50, fds/pipe-p50); ns/op is the sum of all three.
func BenchmarkLauncherEcho(b *testing.B) {
	line := []byte(strings.Repeat("x", 1023) + "\n")
	buf := make([]byte, len(line))

	// Baseline: the child's stdio are our pipes.
	cmd := exec.Command(testExe(b))
	cmd.Env = launcher.Spec{Env: helperSpecEnv("echo")}.Environ()
	childIn, toChild, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	fromChild, childOut, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stdin, cmd.Stdout = childIn, childOut
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	_ = childIn.Close()
	_ = childOut.Close()
	b.Cleanup(func() {
		_ = toChild.Close()
		_ = cmd.Wait()
		_ = fromChild.Close()
	})

	launchWith := func(opts launcher.ClientOptions) *launcher.RemoteProcess {
		p, err := inProcessClient(b, opts).Launch(context.Background(), launcher.Spec{Server: "bench", Command: testExe(b), Env: helperSpecEnv("echo")})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = p.Close() })
		return p
	}
	streamed := launchWith(launcher.ClientOptions{StreamOnly: true})
	passed := launchWith(launcher.ClientOptions{})
	b.Logf("I/O modes: %v and %v", streamed.Mode(), passed.Mode())

	roundTrip := func(w io.Writer, r io.Reader) time.Duration {
		start := time.Now()
		if _, err := w.Write(line); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(r, buf); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	for range 200 { // warm up every path
		roundTrip(toChild, fromChild)
		roundTrip(streamed, streamed)
		roundTrip(passed, passed)
	}

	pipe := make([]time.Duration, 0, b.N)
	stream := make([]time.Duration, 0, b.N)
	fds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		pipe = append(pipe, roundTrip(toChild, fromChild))
		fds = append(fds, roundTrip(passed, passed))
		stream = append(stream, roundTrip(streamed, streamed))
		// gRPC finishes a round trip's work (flow-control window updates)
		// on its own goroutines after Read returns; measured, that costs
		// whatever runs next some 30 µs on two CPUs. An untimed round trip
		// absorbs it, so that it is not charged to the pipe baseline.
		roundTrip(toChild, fromChild)
	}
	b.StopTimer()
	pipeP50 := percentile(pipe, 50)
	for _, m := range []struct {
		name string
		ds   []time.Duration
	}{{"pipe", pipe}, {"stream", stream}, {"fds", fds}} {
		b.ReportMetric(float64(percentile(m.ds, 50).Nanoseconds()), m.name+"-p50-ns")
		b.ReportMetric(float64(percentile(m.ds, 99).Nanoseconds()), m.name+"-p99-ns")
		if m.name != "pipe" {
			b.ReportMetric(float64(percentile(m.ds, 50))/float64(pipeP50), m.name+"/pipe-p50")
		}
	}
}

// inProcessClient serves the local launcher on a unix socket with the
// plugin's gRPC server settings and dials it with the host's.
func inProcessClient(b *testing.B, opts launcher.ClientOptions) *launcher.Client {
	sock := filepath.Join(b.TempDir(), "launcher.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	server := wire.NewGRPCServer(nil)
	if err := (&launcher.GRPCPlugin{Impl: local{}}).GRPCServer(nil, server); err != nil {
		b.Fatal(err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = server.Serve(ln)
	}()
	conn, err := grpc.NewClient("unix://"+sock,
		append(wire.DialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = conn.Close()
		server.Stop()
		<-served
	})
	return launcher.NewClient(conn, nil, opts)
}

// percentile returns the p-th percentile of ds (p = 50: the median).
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}
