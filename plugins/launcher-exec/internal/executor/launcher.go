package executor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/launcher"
)

// Name is the plugin's name in Info.
const Name = "toolgate-launcher-exec"

// Version is the plugin's version in Info.
const Version = "0.1.0"

// Options configures a Launcher. The zero value works.
type Options struct {
	// Logger receives the plugin's diagnostics (never env values, args or
	// scripts). Nil discards them.
	Logger hclog.Logger
	// LookupEnv reads the plugin's own environment (inherit_env, the PATH
	// programs are looked up in). Nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// Launcher is the launcher-exec plugin: a launcher.Launcher that is also an
// sdk.Configurer and sdk.Identifier.
type Launcher struct {
	log       hclog.Logger
	lookupEnv func(string) (string, bool)

	mu  sync.RWMutex
	cfg *Config // nil until a Configure succeeds
}

var (
	_ launcher.Launcher = (*Launcher)(nil)
	_ sdk.Configurer    = (*Launcher)(nil)
	_ sdk.Identifier    = (*Launcher)(nil)
)

// New returns an unconfigured Launcher.
func New(opts Options) *Launcher {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	return &Launcher{log: opts.Logger, lookupEnv: opts.LookupEnv}
}

// Identity names the plugin in Info.
func (*Launcher) Identity() sdk.Identity { return sdk.Identity{Name: Name, Version: Version} }

// ConfigSchema describes the environment's config {} block.
func (*Launcher) ConfigSchema() sdk.ConfigSchema { return Schema() }

// Configure validates and applies config. A refused configuration keeps
// the previous one.
func (l *Launcher) Configure(_ context.Context, config json.RawMessage) []sdk.Diagnostic {
	cfg, diags := ParseConfig(config)
	if cfg == nil {
		return diags
	}
	l.mu.Lock()
	l.cfg = cfg
	l.mu.Unlock()
	l.log.Debug("configured", "executor", cfg.Executor)
	return diags
}

func (l *Launcher) config() *Config {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.cfg
}

// Start runs spec's command through the configured executor. For
// executors with a start script it returns once the script reported that
// the command is about to run, or a *launcher.StartError with the
// executor's stderr if it gave up first.
func (l *Launcher) Start(ctx context.Context, spec launcher.Spec) (launcher.Process, error) {
	cfg := l.config()
	if cfg == nil {
		return nil, fmt.Errorf("start %q: %w: the host must send the environment's config before launching", spec.Server, sdk.ErrNotConfigured)
	}
	marker, err := newMarker()
	if err != nil {
		return nil, fmt.Errorf("start %q: %w", spec.Server, err)
	}
	inv, err := cfg.plan(spec, marker, l.lookupEnv)
	if err != nil {
		return nil, err
	}
	log := l.log.With("server", spec.Server, "executor", cfg.Executor)
	cmd := exec.Command(inv.program, inv.argv[1:]...)
	cmd.Args[0] = inv.argv[0]
	cmd.Env, cmd.Dir = inv.env, inv.dir
	proc, err := launcher.StartCommand(cmd)
	if err != nil {
		var se *launcher.StartError
		if errors.As(err, &se) && cfg.Executor != ExecutorLocal {
			return nil, &launcher.StartError{Kind: se.Kind, Message: fmt.Sprintf("starting the %s executor %q: %s", cfg.Executor, inv.argv[0], se.Message)}
		}
		return nil, err
	}
	log.Debug("executor started", "pid", proc.Pid(), "start_script", inv.marker != "")
	if inv.marker == "" {
		return proc, nil
	}
	return awaitReady(ctx, proc, spec, inv, log)
}

// newMarker returns a readiness line no server or executor prints by
// chance.
func newMarker() (string, error) {
	var nonce [12]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return "", fmt.Errorf("making a start marker: %w", err)
	}
	return readyMarkerPrefix + hex.EncodeToString(nonce[:]), nil
}
