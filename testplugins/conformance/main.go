package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Environment variables set by the conformance runner.
const (
	// ScenarioEnv names the scenario the runner is testing.
	ScenarioEnv = "MCP_CONFORMANCE_SCENARIO"
	// ContextEnv holds scenario-specific JSON (credentials for some auth
	// scenarios); absent for the others.
	ContextEnv = "MCP_CONFORMANCE_CONTEXT"
	// LogLevelEnv sets the hclog level (trace, debug, info, warn, error).
	LogLevelEnv = "TOOLGATE_LOG"
)

// DefaultDeadline bounds one run. It sits below the `timeout 20` wrapper
// the runner contract asks for, so the client reports its own failure
// instead of being killed silently.
const DefaultDeadline = 15 * time.Second

// exitGrace is how long Main waits after the deadline for a scenario to
// notice cancellation before it gives up on it.
const exitGrace = 2 * time.Second

// Exit statuses of Main.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// Process is what Main needs from the operating system.
type Process struct {
	// Args are the command-line arguments without the program name; the
	// runner appends the server URL as the last one.
	Args []string
	// Getenv reads the environment (os.Getenv in the binary).
	Getenv func(string) string
	// Stderr receives logs and the failure message.
	Stderr io.Writer
}

// Main runs the scenario named by MCP_CONFORMANCE_SCENARIO against the URL
// in the last argument and returns the exit status. ctx cancels the run
// (the binary ties it to SIGINT/SIGTERM).
func Main(ctx context.Context, p Process) int {
	fs := flag.NewFlagSet("conformance-client", flag.ContinueOnError)
	fs.SetOutput(p.Stderr)
	deadline := fs.Duration("deadline", DefaultDeadline, "give up and exit 1 after this long")
	fs.Usage = func() {
		fmt.Fprintf(p.Stderr, "usage: %s=<scenario> conformance-client [-deadline D] <server-url>\n", ScenarioEnv)
		fmt.Fprintf(p.Stderr, "scenarios: %s\n", strings.Join(scenarioNames(), ", "))
		fs.PrintDefaults()
	}
	if err := fs.Parse(p.Args); err != nil {
		return ExitUsage
	}
	if fs.NArg() == 0 {
		return usageError(p.Stderr, errors.New("missing the server URL: the runner appends it as the last argument"))
	}
	serverURL := fs.Arg(fs.NArg() - 1)
	if u, err := url.Parse(serverURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageError(p.Stderr, fmt.Errorf("server URL %q is not an http(s) URL: pass the scenario server's URL last", serverURL))
	}
	name := p.Getenv(ScenarioEnv)
	if name == "" {
		return usageError(p.Stderr, fmt.Errorf("%s is not set: run under `conformance client` or set it to one of: %s",
			ScenarioEnv, strings.Join(scenarioNames(), ", ")))
	}
	run, ok := scenarioTable()[name]
	if !ok {
		return usageError(p.Stderr, fmt.Errorf("unknown scenario %q: this client implements %s",
			name, strings.Join(scenarioNames(), ", ")))
	}
	var scenarioContext json.RawMessage
	if raw := p.Getenv(ContextEnv); raw != "" {
		if !json.Valid([]byte(raw)) {
			// Do not quote it: it may hold client secrets.
			return usageError(p.Stderr, fmt.Errorf("%s is not valid JSON", ContextEnv))
		}
		scenarioContext = json.RawMessage(raw)
	}

	level := hclog.LevelFromString(p.Getenv(LogLevelEnv))
	if level == hclog.NoLevel {
		level = hclog.Debug
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "conformance-client", Level: level, Output: p.Stderr})
	log = log.With("scenario", name)

	ctx, cancel := context.WithTimeout(ctx, *deadline)
	defer cancel()
	env := scenarioEnv{serverURL: serverURL, context: scenarioContext, log: log}

	start := time.Now()
	done := make(chan error, 1) // buffered: an abandoned scenario must not block forever
	go func() { done <- run(ctx, env) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		select {
		case err = <-done:
		case <-time.After(exitGrace):
			err = fmt.Errorf("running scenario: did not stop within %s of its deadline (%s)", exitGrace, *deadline)
		}
	}
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("%w (%v)", err, context.Cause(ctx))
		}
		log.Error("scenario failed", "error", err, "elapsed", time.Since(start))
		fmt.Fprintf(p.Stderr, "conformance-client: scenario %q failed: %v\n", name, err)
		return ExitFailure
	}
	log.Info("scenario completed", "elapsed", time.Since(start))
	return ExitOK
}

func usageError(w io.Writer, err error) int {
	fmt.Fprintf(w, "conformance-client: %v\n", err)
	return ExitUsage
}
