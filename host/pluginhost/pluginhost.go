package pluginhost

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/launch"
	"github.com/toolgate/toolgate/sdk/launcher"
)

// DefaultStartTimeout bounds a plugin's exec and go-plugin handshake.
const DefaultStartTimeout = 30 * time.Second

// Options configures a [Plugins]. Zero values are documented per field.
type Options struct {
	// Logger is the host's root logger; each plugin's own log lines (and
	// go-plugin's about it) appear under Logger.Named("plugin").Named(name).
	// Its level is passed to plugins in sdk.EnvLogLevel. nil discards.
	Logger hclog.Logger
	// Events receives events.PluginState; nil discards. A state's event is
	// emitted before callers waiting on that state are released, on the
	// goroutine that changed it: Emit must not block on, or call back
	// into, these Plugins.
	Events events.Sink
	// LookupEnv reads the host environment for the few variables a plugin
	// gets (PATH, HOME, TMPDIR, LANG); nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Cwd is the session's working directory, reported to hooks; "" means
	// the process's.
	Cwd string
	// StartTimeout bounds exec and handshake; zero means
	// [DefaultStartTimeout].
	StartTimeout time.Duration
	// Restart says how crashed plugins come back; zero fields take the
	// documented defaults.
	Restart RestartPolicy
	// Launcher configures the processes launcher plugins run (shutdown
	// graces). A nil Logger logs under the launcher plugin's logger.
	Launcher launcher.ClientOptions
}

// RestartPolicy says how a crashed plugin is restarted: the first restart
// waits Initial, each further crash within Window doubles the wait up to
// Max (each wait less up to 20% jitter, see internal/backoff), and the
// MaxCrashes-th crash within Window gives up. A failure to
// start counts as a crash.
type RestartPolicy struct {
	Initial    time.Duration // 0 = 100 ms
	Max        time.Duration // 0 = 10 s
	MaxCrashes int           // 0 = 5
	Window     time.Duration // 0 = 1 min
}

func (r RestartPolicy) withDefaults() RestartPolicy {
	if r.Initial <= 0 {
		r.Initial = 100 * time.Millisecond
	}
	if r.Max <= 0 {
		r.Max = 10 * time.Second
	}
	if r.MaxCrashes <= 0 {
		r.MaxCrashes = 5
	}
	if r.Window <= 0 {
		r.Window = time.Minute
	}
	return r
}

// Plugins runs the plugin blocks of a configuration. Nothing starts until a
// plugin is first used (or [Plugins.Probe] is called).
type Plugins struct {
	// fixed at construction
	opts Options
	log  hclog.Logger // root.Named("plugin")

	// retiring tracks instances closed in the background after a reload.
	retiring sync.WaitGroup

	mu     sync.Mutex
	cfg    *config.Config
	blocks map[string]*instance // by plugin block name
	envs   map[envKey]*instance // launcher instances per environment
	closed bool

	// afterVerify, when set (tests only, see export_test.go), runs
	// between a binary's checks and its execution: the window in which
	// a swapped file must not be run.
	afterVerify func(path string)
}

type envKey struct{ plugin, env string }

// New returns the Plugins of cfg's plugin blocks.
func New(cfg *config.Config, opts Options) *Plugins {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	if opts.Cwd == "" {
		opts.Cwd, _ = os.Getwd()
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	opts.Restart = opts.Restart.withDefaults()
	h := &Plugins{
		opts:   opts,
		log:    opts.Logger.Named("plugin"),
		cfg:    cfg,
		blocks: map[string]*instance{},
		envs:   map[envKey]*instance{},
	}
	for _, p := range cfg.Plugins {
		h.blocks[p.Name] = newInstance(h, p, nil)
	}
	return h
}

// Apply moves the host to cfg: a plugin whose block has the same
// projection keeps its process (and gets another chance if it was given
// up on or refused); a changed or removed block's process is stopped in
// the background, and calls still using it fail with [ErrClosed]; a
// launcher process serving an environment is kept only while both its
// plugin block and its environment block are unchanged.
func (h *Plugins) Apply(cfg *config.Config) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.cfg = cfg
	blocks := map[string]*instance{}
	for _, p := range cfg.Plugins {
		if old, ok := h.blocks[p.Name]; ok && old.sameBlock(p) {
			old.renew(p, nil)
			blocks[p.Name] = old
			delete(h.blocks, p.Name)
			continue
		}
		blocks[p.Name] = newInstance(h, p, nil)
	}
	for _, old := range h.blocks {
		h.retire(old)
	}
	h.blocks = blocks

	for k, old := range h.envs {
		p, okP := cfg.Plugin(k.plugin)
		e, okE := cfg.Environment(k.env)
		if okP && okE && e.Launcher == k.plugin && old.sameBlock(p) && old.sameEnvironment(e) {
			old.renew(p, &e)
			continue
		}
		delete(h.envs, k)
		h.retire(old)
	}
}

// retire stops in in the background; Close waits for it. Callers hold
// h.mu.
func (h *Plugins) retire(in *instance) {
	h.retiring.Add(1)
	go func() {
		defer h.retiring.Done()
		in.close()
	}()
}

// Close stops every plugin process and waits until they are gone.
// Idempotent.
func (h *Plugins) Close() error {
	h.mu.Lock()
	var all []*instance
	if !h.closed {
		h.closed = true
		for _, in := range h.blocks {
			all = append(all, in)
		}
		for _, in := range h.envs {
			all = append(all, in)
		}
	}
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, in := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in.close()
		}()
	}
	wg.Wait()
	h.retiring.Wait()
	return nil
}

// Hooks returns an adapter for every hook plugin block, in config order,
// for approval.Options.Hooks. Adapters of one configuration keep using
// their processes until a reload retires them.
func (h *Plugins) Hooks() []approval.Hook { return h.hooks(false) }

// ShadowHooks returns an adapter for every hook block with mode =
// "shadow", for approval.Options.ShadowHooks: they are never part of
// the enforced chain.
func (h *Plugins) ShadowHooks() []approval.Hook { return h.hooks(true) }

func (h *Plugins) hooks(shadow bool) []approval.Hook {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []approval.Hook
	for _, p := range h.cfg.Plugins {
		if p.Kind != config.KindHook || p.Shadow != shadow {
			continue
		}
		if in, ok := h.blocks[p.Name]; ok {
			out = append(out, newHook(in, p, h.cfg.Approval.Permissions, h.opts.Cwd))
		}
	}
	return out
}

// HookAdapters is [Plugins.Hooks] with the concrete type, for callers that
// also need PreToolUse and PostToolUse.
func (h *Plugins) HookAdapters() []*Hook {
	var out []*Hook
	for _, a := range h.Hooks() {
		out = append(out, a.(*Hook))
	}
	return out
}

// Reviewer returns the Guardian adapter, for approval.Options.Reviewer:
// the plugin named by approval { guardian = "..." }, else the only
// guardian plugin block. It returns nil (an untyped nil interface) when
// there is none.
func (h *Plugins) Reviewer() approval.Reviewer {
	h.mu.Lock()
	defer h.mu.Unlock()
	name := h.cfg.Approval.Guardian
	if name == "" {
		var guardians []string
		for _, p := range h.cfg.Plugins {
			if p.Kind == config.KindGuardian {
				guardians = append(guardians, p.Name)
			}
		}
		if len(guardians) != 1 {
			return nil
		}
		name = guardians[0]
	}
	p, ok := h.cfg.Plugin(name)
	in, live := h.blocks[name]
	if !ok || !live || p.Kind != config.KindGuardian {
		return nil
	}
	return newReviewer(in, p)
}

// Launcher returns the launcher that plugin (a block of kind launcher)
// serves for environment env, for environment.Options.Plugin. Nothing
// starts until its first Launch; every server of env shares one plugin
// process, configured with env's config {} block (or, when env has none,
// the plugin block's).
func (h *Plugins) Launcher(plugin string, env config.Environment) (launch.Launcher, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, fmt.Errorf("%w: launcher plugin %q", ErrClosed, plugin)
	}
	p, ok := h.cfg.Plugin(plugin)
	if !ok || p.Kind != config.KindLauncher {
		var names []string
		for _, q := range h.cfg.Plugins {
			if q.Kind == config.KindLauncher {
				names = append(names, q.Name)
			}
		}
		return nil, fmt.Errorf("%w: no plugin block %q of kind launcher; set launcher in environment %q to \"local\" or one of %q",
			ErrUnknownPlugin, plugin, env.Name, names)
	}
	k := envKey{plugin, env.Name}
	in, ok := h.envs[k]
	if ok && !(in.sameBlock(p) && in.sameEnvironment(env)) {
		delete(h.envs, k)
		h.retire(in)
		ok = false
	}
	if !ok {
		in = newInstance(h, p, &env)
		h.envs[k] = in
	}
	return &Launcher{in: in}, nil
}

// Probe starts every plugin block's process (launchers with their own
// block's configuration) and waits until each has answered Info and
// Configure or failed, so that [Plugins.Status] can describe them. It returns
// once all are done or ctx ends; failures are reported in Status.
func (h *Plugins) Probe(ctx context.Context) {
	h.mu.Lock()
	var all []*instance
	for _, p := range h.cfg.Plugins {
		if in, ok := h.blocks[p.Name]; ok {
			all = append(all, in)
		}
	}
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, in := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = in.acquire(ctx)
		}()
	}
	wg.Wait()
}

// Status describes every plugin block in config order, then the launcher
// processes serving environments, without starting anything.
func (h *Plugins) Status() []Status {
	h.mu.Lock()
	var all []*instance
	for _, p := range h.cfg.Plugins {
		if in, ok := h.blocks[p.Name]; ok {
			all = append(all, in)
		}
	}
	var envs []*instance
	for _, in := range h.envs {
		envs = append(envs, in)
	}
	h.mu.Unlock()
	slices.SortFunc(envs, func(a, b *instance) int {
		if c := cmp.Compare(a.blockName(), b.blockName()); c != 0 {
			return c
		}
		return cmp.Compare(a.env.Name, b.env.Name)
	})
	out := make([]Status, 0, len(all)+len(envs))
	for _, in := range append(all, envs...) {
		out = append(out, in.status())
	}
	return out
}
