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

	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/internal/wire"
	"github.com/toolgate/toolgate/sdk/launcher"
)

// BenchmarkLauncherEcho compares a 1 KiB line's round trip through an echo
// child over the launcher stream (in-process plugin, real gRPC on a unix
// socket with the settings plugins serve and hosts dial with, no TLS) with
// the same round trip over plain os.Pipe pipes to the same kind of child,
// in the same run. Iterations alternate between the
// two so that both see the same machine state. It reports the median of
// each and their ratio (stream/pipe-p50); ns/op is the sum of both.
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

	c := inProcessClient(b)
	p, err := c.Launch(context.Background(), launcher.Spec{Server: "bench", Command: testExe(b), Env: helperSpecEnv("echo")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Close() })

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
	for range 200 { // warm up both paths
		roundTrip(toChild, fromChild)
		roundTrip(p, p)
	}

	pipe := make([]time.Duration, 0, b.N)
	stream := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		pipe = append(pipe, roundTrip(toChild, fromChild))
		stream = append(stream, roundTrip(p, p))
	}
	b.StopTimer()
	pipeP50, streamP50 := median(pipe), median(stream)
	b.ReportMetric(float64(pipeP50.Nanoseconds()), "pipe-p50-ns")
	b.ReportMetric(float64(streamP50.Nanoseconds()), "stream-p50-ns")
	b.ReportMetric(float64(streamP50)/float64(pipeP50), "stream/pipe-p50")
}

// inProcessClient serves the local launcher on a unix socket with the
// plugin's gRPC server settings and dials it with the host's.
func inProcessClient(b *testing.B) *launcher.Client {
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
		append(sdk.GRPCDialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = conn.Close()
		server.Stop()
		<-served
	})
	return launcher.NewClient(conn, nil, launcher.ClientOptions{})
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
