package mcpdemo

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Version is reported in serverInfo.
const Version = "1.0.0"

// Texts that tests match on; keep them stable.
const (
	failInitializeMessage = "initialize refused by --fail-initialize"
	startupFailureMessage = "fatal: demo startup failure"
)

// CrashExitCode is the exit status after --crash-after.
const CrashExitCode = 3

// Env is what a Demo needs from its process. Zero fields get process
// defaults, so tests can run a Demo in-process without touching os.Exit or
// the real stderr.
type Env struct {
	// Stderr receives diagnostics and the lines tests wait on. nil: discard.
	Stderr io.Writer
	// CallLog, when non-nil, receives the call log instead of the
	// --call-log file. Each line arrives in a single Write.
	CallLog io.Writer
	// Exit ends the process (used by --crash-after). nil: os.Exit.
	Exit func(code int)
}

// Demo is one configured mcp-demo server. It is safe for concurrent use;
// one Demo may serve many sessions (HTTP) but is usually serving one
// (stdio).
type Demo struct {
	cfg    Config
	stderr *lineWriter
	exit   func(int)

	callLog     *lineWriter
	callLogFile *os.File // owned when opened from --call-log

	server *mcp.Server

	// crash counts completed tools/call responses for --crash-after.
	crashCount atomic.Int64
	crashOnce  sync.Once
}

// New builds the server described by cfg. Call Close when done.
func New(cfg Config, env Env) (*Demo, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	d := &Demo{cfg: cfg, exit: env.Exit}
	if d.exit == nil {
		d.exit = os.Exit
	}
	stderr := env.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	d.stderr = &lineWriter{w: stderr}
	switch {
	case env.CallLog != nil:
		d.callLog = &lineWriter{w: env.CallLog}
	case cfg.CallLog != "":
		// O_APPEND makes each single-Write line land whole even when several
		// servers share one log file.
		f, err := os.OpenFile(cfg.CallLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("open call log: %w; pass a writable path to --call-log", err)
		}
		d.callLogFile = f
		d.callLog = &lineWriter{w: f}
	}

	d.server = mcp.NewServer(&mcp.Implementation{Name: cfg.Name, Version: Version}, d.serverOptions())
	d.server.AddReceivingMiddleware(d.receivingMiddleware)
	d.registerTools()
	if cfg.Resources > 0 {
		d.registerResources()
	}
	return d, nil
}

// Server is the underlying go-sdk server, for in-process transports.
func (d *Demo) Server() *mcp.Server { return d.server }

// Close releases the call log file.
func (d *Demo) Close() error {
	if d.callLogFile == nil {
		return nil
	}
	if err := d.callLogFile.Close(); err != nil {
		return fmt.Errorf("close call log: %w", err)
	}
	return nil
}

func (d *Demo) serverOptions() *mcp.ServerOptions {
	opts := &mcp.ServerOptions{
		Instructions:              d.cfg.Instructions,
		PageSize:                  d.cfg.PageSize,
		SupportedProtocolVersions: d.cfg.serverProtocolVersions(),
		// Advertise tools even with an empty tool set, so hosts list them.
		Capabilities: &mcp.ServerCapabilities{
			Logging: &mcp.LoggingCapabilities{},
			Tools:   &mcp.ToolCapabilities{ListChanged: true},
		},
	}
	if d.cfg.Resources > 0 {
		opts.CompletionHandler = complete
		opts.SubscribeHandler = func(context.Context, *mcp.SubscribeRequest) error { return nil }
		opts.UnsubscribeHandler = func(context.Context, *mcp.UnsubscribeRequest) error { return nil }
	}
	if len(d.cfg.SandboxCapabilities) > 0 {
		opts.Capabilities.Experimental = map[string]any{}
		for _, name := range d.cfg.SandboxCapabilities {
			opts.Capabilities.Experimental[name] = map[string]any{}
		}
	}
	if name := d.cfg.AddToolAfterInitialized; name != "" {
		opts.InitializedHandler = func(context.Context, *mcp.InitializedRequest) {
			d.addOKTool(name, "Added after notifications/initialized (--add-tool-after-initialized).")
		}
	}
	return opts
}

// noteCallResponseWritten counts one finished tools/call and ends the
// process when it was the --crash-after'th. Transports call it only after
// the response bytes have left the process.
func (d *Demo) noteCallResponseWritten() {
	if d.cfg.CrashAfter <= 0 {
		return
	}
	if d.crashCount.Add(1) == int64(d.cfg.CrashAfter) {
		d.crashOnce.Do(func() {
			d.stderr.printf("mcp-demo: exiting with status %d after tools/call #%d (--crash-after)", CrashExitCode, d.cfg.CrashAfter)
			d.exit(CrashExitCode)
		})
	}
}

// lineWriter serializes writers so that each line is one Write call: tests
// read stderr and the call log line by line while several goroutines write.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) writeLine(line []byte) {
	if l == nil {
		return
	}
	buf := make([]byte, 0, len(line)+1)
	buf = append(buf, line...)
	buf = append(buf, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.w.Write(buf)
}

func (l *lineWriter) printf(format string, args ...any) {
	l.writeLine(fmt.Appendf(nil, format, args...))
}
