package pluginhost

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/internal/backoff"
	"github.com/toolgate/toolgate/internal/contain"
	"github.com/toolgate/toolgate/sdk"
)

// instance is one plugin process slot: a plugin block, or a launcher
// plugin serving one environment. It starts the process on first use,
// shares it with every caller, restarts it after a crash with backoff,
// and gives up on one that keeps crashing.
type instance struct {
	// fixed at construction
	h    *Plugins
	name string // in events and errors: the block name, or "plugin@environment"
	kind sdk.Kind
	log  hclog.Logger
	// stopCtx is done once close begins; it bounds a start in progress.
	stopCtx context.Context
	stop    context.CancelFunc
	// wg counts keeper goroutines (one per process, started or starting).
	wg sync.WaitGroup

	mu    sync.Mutex
	block config.Plugin
	env   *config.Environment // the environment a launcher instance serves; nil otherwise
	cur   *process            // starting or running; nil when none
	last  *process            // the latest process that started, for Status
	// lastErr is the latest start failure; lastExit how the latest
	// process ended.
	lastErr   error
	lastExit  string
	starts    int
	crashes   []time.Time // crashes and start failures within the restart window
	notBefore time.Time   // backoff: no start before this
	// failure is returned to every caller until renew: the plugin was
	// given up on (givenUp) or refused (checksum, versions, config).
	failure  error
	givenUp  bool
	checksum checksumState
	closed   bool
}

// process is one plugin process, from its start to its end.
type process struct {
	ready chan struct{} // closed when the start finished; err says how
	gone  chan struct{} // closed once the process ended and was accounted for

	// Written by the keeper before ready closes; read-only afterwards.
	err      error
	client   *plugin.Client
	cmd      *exec.Cmd
	plugin   pluginClient
	info     sdk.Info
	api      string
	protocol int
	pid      int
	exited   <-chan struct{}
	// pinnedDir holds the verified copy of a pinned binary that the
	// process runs from; removed once the process has ended.
	pinnedDir string
	// cell holds the plugin and everything it starts (a launcher's
	// servers, a hook's commands): closed, ending them, once the plugin
	// process has been reaped. nil until the start creates it.
	cell *contain.Cell

	// exit says how the process ended; written before gone closes.
	exit string
}

// closeCell ends whatever the plugin left running and removes its cgroup,
// once the plugin process has been reaped.
func (p *process) closeCell(log hclog.Logger) {
	if p.cell == nil {
		return
	}
	if err := p.cell.Close(); err != nil {
		log.Warn("could not end every process the plugin started", "error", err)
	}
}

// removePinnedCopy deletes the verified copy a pinned plugin ran from,
// once its process has been reaped (Windows cannot delete a running
// executable).
func (p *process) removePinnedCopy(log hclog.Logger) {
	if p.pinnedDir == "" {
		return
	}
	if err := os.RemoveAll(p.pinnedDir); err != nil {
		log.Warn("could not remove the plugin's verified copy", "dir", p.pinnedDir, "error", err)
	}
}

// pluginClient is what every kind's host-side SDK client offers.
type pluginClient interface {
	Info(ctx context.Context) (sdk.Info, error)
	Configure(ctx context.Context, config json.RawMessage) ([]sdk.Diagnostic, error)
	Exited() <-chan struct{}
}

type checksumState struct {
	checked  bool
	mismatch bool
	actual   string
}

func newInstance(h *Plugins, p config.Plugin, env *config.Environment) *instance {
	name := p.Name
	log := h.log.Named(p.Name)
	if env != nil {
		name = p.Name + "@" + env.Name
		log = log.With("environment", env.Name)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &instance{
		h: h, name: name, kind: sdk.Kind(p.Kind), log: log,
		stopCtx: ctx, stop: cancel,
		block: p, env: env,
	}
}

func (in *instance) blockName() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.block.Name
}

func (in *instance) sameBlock(p config.Plugin) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.block.SameProjection(p)
}

func (in *instance) sameEnvironment(e config.Environment) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.env != nil && in.env.SameProjection(e)
}

// renew takes an equivalent block from a reload (source ranges may have
// moved) and gives a plugin that was given up on or refused another
// chance: the user may have fixed the binary or a file its config reads.
func (in *instance) renew(p config.Plugin, env *config.Environment) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.block = p
	if in.env != nil && env != nil {
		in.env = env
	}
	in.failure, in.givenUp = nil, false
	in.crashes, in.notBefore = nil, time.Time{}
}

func (in *instance) closedError() error {
	return fmt.Errorf("%w: plugin %q was stopped (the host is closing, or a configuration reload changed or removed its block)", ErrClosed, in.name)
}

// acquire returns the running process, starting one if there is none.
// Concurrent callers share one start. ctx bounds only the wait: the start
// itself runs on the instance's lifetime, so a caller that gives up does
// not abort a start that the next caller can use.
func (in *instance) acquire(ctx context.Context) (*process, error) {
	for {
		in.mu.Lock()
		if in.closed {
			in.mu.Unlock()
			return nil, in.closedError()
		}
		if in.failure != nil {
			err := in.failure
			in.mu.Unlock()
			return nil, err
		}
		p := in.cur
		if p == nil {
			if wait := time.Until(in.notBefore); wait > 0 {
				in.mu.Unlock()
				if err := in.backoff(ctx, wait); err != nil {
					return nil, err
				}
				continue
			}
			p = &process{ready: make(chan struct{}), gone: make(chan struct{})}
			in.cur = p
			in.wg.Add(1)
			go in.keep(p, in.block, in.env)
		}
		in.mu.Unlock()

		select {
		case <-p.ready:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for plugin %q to start: %w", in.name, ctx.Err())
		}
		if p.err != nil {
			return nil, p.err
		}
		select {
		case <-p.exited:
			// It died under us: wait until the keeper has accounted for
			// it (cur is cleared then), and take the next one.
			select {
			case <-p.gone:
			case <-ctx.Done():
				return nil, fmt.Errorf("waiting for plugin %q to restart: %w", in.name, ctx.Err())
			}
		default:
			return p, nil
		}
	}
}

func (in *instance) backoff(ctx context.Context, wait time.Duration) error {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("plugin %q is restarting after a crash (next start in %s): %w", in.name, wait.Round(time.Millisecond), ctx.Err())
	case <-in.stopCtx.Done():
		return in.closedError()
	}
}

// keep runs one process from start to end. It stays locked to its OS
// thread until the process is reaped: Linux sends Pdeathsig when the
// thread that forked the child ends, and the Go runtime ends a thread
// when a goroutine exits while locked to it — so no other goroutine may
// run (and exit locked) on the forking thread while the child lives.
func (in *instance) keep(p *process, block config.Plugin, env *config.Environment) {
	defer in.wg.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread() // runs last: after Kill has reaped the process
	defer p.removePinnedCopy(in.log)
	defer p.closeCell(in.log) // after Kill below has reaped the process

	if err := in.start(p, block, env); err != nil {
		if p.client != nil {
			p.client.Kill()
		}
		in.startFailed(p, err)
		return
	}
	in.started(p)
	select {
	case <-p.exited:
		in.ended(p, exitText(p.cmd), true)
		p.client.Kill() // go-plugin's goroutines and socket directory
	case <-in.stopCtx.Done():
		p.client.Kill()
		in.ended(p, "stopped by the host", false)
	}
}

func (in *instance) started(p *process) {
	in.mu.Lock()
	in.starts++
	in.last = p
	in.lastErr = nil
	in.mu.Unlock()
	// Told before a caller can use it: whoever saw the plugin answer can
	// count on its started event (the same order in startFailed and ended).
	in.log.Info("plugin started", "pid", p.pid, "plugin_version", p.info.Version,
		"protocol", p.protocol, "api_version", p.api)
	in.emit(events.PluginStarted, p.pid, "")
	close(p.ready)
}

func (in *instance) startFailed(p *process, err error) {
	now := time.Now()
	in.mu.Lock()
	if in.cur == p {
		in.cur = nil
	}
	stopping := in.closed
	var giveUp error
	switch {
	case stopping:
		err = fmt.Errorf("%w: plugin %q was stopped while it was starting", ErrClosed, in.name)
	case isRefusal(err):
		in.failure = err
	default:
		giveUp, _ = in.crashedLocked(now, err.Error())
	}
	p.err = err
	in.lastErr = err
	in.mu.Unlock()
	if !stopping {
		in.log.Warn("plugin failed to start", "error", err)
		in.emit(events.PluginFailed, p.pid, err.Error())
		if giveUp != nil {
			in.log.Error("giving up on plugin", "error", giveUp)
			in.emit(events.PluginGivenUp, p.pid, giveUp.Error())
		}
	}
	close(p.ready)
	close(p.gone)
}

// ended accounts for a process that is gone; crashed says it ended by
// itself (unless the host is closing it at the same moment).
func (in *instance) ended(p *process, how string, crashed bool) {
	now := time.Now()
	in.mu.Lock()
	p.exit = how
	if in.cur == p {
		in.cur = nil
	}
	in.lastExit = how
	crashed = crashed && !in.closed
	var giveUp error
	var delay time.Duration
	if crashed {
		giveUp, delay = in.crashedLocked(now, how)
	}
	in.mu.Unlock()
	defer close(p.gone)
	if !crashed {
		in.log.Debug("plugin stopped", "pid", p.pid)
		in.emit(events.PluginExited, p.pid, "")
		return
	}
	if giveUp != nil {
		in.log.Warn("plugin process exited", "pid", p.pid, "exit", how)
		in.emit(events.PluginExited, p.pid, how)
		in.log.Error("giving up on plugin", "error", giveUp)
		in.emit(events.PluginGivenUp, p.pid, giveUp.Error())
		return
	}
	in.log.Warn("plugin process exited; restarting it on next use", "pid", p.pid, "exit", how, "backoff", delay)
	in.emit(events.PluginExited, p.pid, how)
}

// crashedLocked records a crash or a failed start at now and decides what
// follows: a start no earlier than a backoff, or giving up. Callers hold
// in.mu.
func (in *instance) crashedLocked(now time.Time, last string) (giveUp error, delay time.Duration) {
	r := in.h.opts.Restart
	recent := in.crashes[:0]
	for _, t := range in.crashes {
		if now.Sub(t) < r.Window {
			recent = append(recent, t)
		}
	}
	in.crashes = append(recent, now)
	n := len(in.crashes)
	if n >= r.MaxCrashes {
		in.failure = fmt.Errorf("%w: plugin %q (%s) crashed or failed to start %d times within %s (last: %s); "+
			"it is not restarted until its plugin block changes or the configuration is reloaded. "+
			"Fix or replace the plugin; its log lines are under plugin.%s",
			ErrGivenUp, in.name, in.block.Path, n, r.Window, last, in.block.Name)
		in.givenUp = true
		return in.failure, 0
	}
	delay = backoff.Policy{Initial: r.Initial, Max: r.Max}.Delay(n)
	in.notBefore = now.Add(delay)
	return nil, delay
}

func (in *instance) close() {
	in.mu.Lock()
	in.closed = true
	in.mu.Unlock()
	in.stop()
	in.wg.Wait()
}

func (in *instance) emit(status string, pid int, errText string) {
	if in.h.opts.Events == nil {
		return
	}
	in.h.opts.Events.Emit(events.PluginState{
		At:         time.Now(),
		Plugin:     in.name,
		PluginKind: string(in.kind),
		Status:     status,
		Error:      errText,
		Pid:        pid,
	})
}

// exitText says how a reaped process ended ("exit status 3", "signal:
// killed").
func exitText(cmd *exec.Cmd) string {
	if cmd == nil || cmd.ProcessState == nil {
		return "exited"
	}
	return cmd.ProcessState.String()
}
