package mcpdemo

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// Process is what Main takes from the operating system.
type Process struct {
	Args   []string // without the program name
	Stdin  io.ReadCloser
	Stdout io.WriteCloser
	Stderr io.Writer
}

// Main runs mcp-demo and returns its exit status (see Usage). It may end
// the process itself: --crash-after calls os.Exit.
func Main(p Process) int {
	cfg, err := ParseArgs(p.Args, p.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		_, _ = io.WriteString(p.Stdout, Usage())
		return 0
	}
	if err != nil {
		return 2
	}
	if cfg.SleepForever {
		sleepUntilKilled()
		return 0
	}
	if cfg.FamilyParent {
		if err := runFamilyParent(p.Stdout); err != nil {
			fmt.Fprintf(p.Stderr, "mcp-demo: %v\n", err)
			return 1
		}
		sleepUntilKilled()
		return 0
	}
	for i := range cfg.StderrFlood {
		fmt.Fprintf(p.Stderr, "mcp-demo: flood line %d\n", i)
	}
	if cfg.HostileText {
		fmt.Fprintln(p.Stderr, HostileText)
	}
	if cfg.ExitImmediately >= 0 {
		fmt.Fprintln(p.Stderr, startupFailureMessage)
		return cfg.ExitImmediately
	}
	if cfg.IgnoreSIGTERM {
		signal.Ignore(syscall.SIGTERM)
	}
	stderr := &lineWriter{w: p.Stderr}
	if cfg.StderrNoise {
		stderr.printf("mcp-demo: noise: starting pid %d", os.Getpid())
	}
	if cfg.EscapingChildPidFile != "" {
		if err := spawnEscapingChild(cfg.EscapingChildPidFile); err != nil {
			stderr.printf("mcp-demo: %v", err)
			return 1
		}
	}
	if cfg.FamilyPidFile != "" {
		if err := spawnFamily(cfg.FamilyPidFile); err != nil {
			stderr.printf("mcp-demo: %v", err)
			return 1
		}
	}
	if cfg.SpawnChild {
		if err := spawnChild(stderr); err != nil {
			stderr.printf("mcp-demo: %v", err)
			return 1
		}
	}

	d, err := New(*cfg, Env{Stderr: p.Stderr})
	if err != nil {
		stderr.printf("mcp-demo: %v", err)
		return 1
	}
	defer d.Close()

	if cfg.HTTPAddr == "" {
		// stdio: SIGTERM keeps its default meaning (die at once), which is
		// what a host escalating termination expects of a typical server.
		if err := d.ServeStdio(context.Background(), p.Stdin, p.Stdout); err != nil {
			stderr.printf("mcp-demo: %v", err)
			return 1
		}
		return 0
	}

	sigs := []os.Signal{os.Interrupt}
	if !cfg.IgnoreSIGTERM {
		sigs = append(sigs, syscall.SIGTERM)
	}
	ctx, stop := signal.NotifyContext(context.Background(), sigs...)
	defer stop()
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		stderr.printf("mcp-demo: listen on %s: %v; pass a free host:port to --http (port 0 picks one)", cfg.HTTPAddr, err)
		return 1
	}
	if err := d.ServeStreamableHTTP(ctx, ln); err != nil {
		stderr.printf("mcp-demo: %v", err)
		return 1
	}
	return 0
}

// spawnChild starts this binary again as a long sleeper. It stays in our
// process group, so only a host that kills the whole group removes it.
func spawnChild(stderr *lineWriter) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("spawn child: find own executable: %w", err)
	}
	cmd := exec.Command(self, "--"+sleepForeverFlag)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("spawn child: %w", err)
	}
	stderr.printf("child pid %d", cmd.Process.Pid)
	// Reap it if it dies first, so it never lingers as a zombie of ours.
	go func() { _ = cmd.Wait() }()
	return nil
}

// sleepUntilKilled blocks like `sleep 300` would (long enough for any
// test), with default signal handling so SIGTERM and SIGKILL end it.
func sleepUntilKilled() {
	time.Sleep(24 * time.Hour)
}
