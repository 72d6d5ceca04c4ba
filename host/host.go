package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/environment"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/execution"
	"github.com/toolgate/toolgate/host/exposure"
	"github.com/toolgate/toolgate/host/exposure/embeddings"
	"github.com/toolgate/toolgate/host/identity"
	"github.com/toolgate/toolgate/host/internal/warnlimit"
	"github.com/toolgate/toolgate/host/launch"
	"github.com/toolgate/toolgate/host/ledger"
	"github.com/toolgate/toolgate/host/manager"
	"github.com/toolgate/toolgate/host/mcpclient"
	"github.com/toolgate/toolgate/host/pipeline"
	"github.com/toolgate/toolgate/host/pluginhost"
	"github.com/toolgate/toolgate/host/ratelimit"
)

// Options configures a Host.
type Options struct {
	// Logger is the root logger; nil discards.
	Logger hclog.Logger
	// Sinks receive every event in addition to the log and the audit file.
	Sinks []events.Sink
	// LookupEnv reads the host environment; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// LimitClock is the clock serve's limit blocks read (host/ratelimit);
	// nil means time.Now. Tests pass a stopped one, so a refusal's
	// "Retry in N s" does not depend on how fast the machine is.
	LimitClock func() time.Time
	// ClientInfo identifies the host to servers; nil means toolgate.
	ClientInfo *mcp.Implementation
	// Serving says the host serves upstream MCP clients (toolgate
	// serve): the requests' Upstreams are those clients, so "Allow and
	// don't ask me again" is offered only with serve {
	// allow_persistent_approval = true }; servers with forward_sampling
	// are offered sampling, and servers' log messages go to the clients
	// (see Listen) instead of toolgate's log. Who answers a request is
	// never the host's: each request carries its own
	// (pipeline.Request.Upstream, exposure.CallRequest.Upstream).
	Serving bool
	// Hooks are PermissionRequest hooks, in config order.
	Hooks []approval.Hook
	// PreToolUse and PostToolUse hooks, in config order.
	PreToolUse  []approval.PreToolUseHook
	PostToolUse []approval.PostToolUseHook
	// Reviewer is the Guardian, when configured.
	Reviewer approval.Reviewer
	// Cwd is the working directory reported to servers that ask for
	// sandbox state; "" means the process's.
	Cwd string
	// Manager overrides manager options that tests tune (restart policy,
	// relist delay). Logger, Events, Environments and LookupEnv are set
	// by New.
	Manager manager.Options
}

// Host is one running toolgate: configuration, event bus, audit log, the
// connection manager, approval and execution. It holds no logic of its
// own; it builds the parts and swaps them on a configuration reload.
type Host struct {
	Bus     *events.Bus
	Manager *manager.Manager

	opts  Options
	log   hclog.Logger
	audit *events.AuditSink
	// secrets collects what every server was given (its clients add to
	// it), so the audit log can redact any of them from any record.
	secrets mcpclient.Secrets
	local   launch.Launcher
	cwd     string
	// plugins runs the plugin blocks (hooks, Guardian, launchers); it
	// follows reloads itself (see Apply).
	plugins *pluginhost.Plugins
	// indexes shares tool_search indexes between steps.
	indexes exposure.Indexes
	// embedder is tool_search's semantic ranking (exposure { embeddings });
	// nil = BM25 alone. Guarded by mu; kept across reloads that leave the
	// block as it was, so its vectors stay cached.
	embedder *embeddings.Client

	mu       sync.RWMutex // guards the parts a reload replaces
	cfg      *config.Config
	approval *approval.Procedure
	shadow   *approval.ShadowRunner // runs mode = "shadow" hooks; closed with the host
	executor *execution.Executor
	limiter  *ratelimit.Limiter // serve's limit blocks; nil = none
	pipeline *pipeline.Pipeline // built from approval, executor and limiter
	envs     *environment.Registry

	// running finds the session of a call its server sends something
	// back during; shared by every pipeline the host builds.
	running pipeline.Running
	// listeners take what belongs to no call (see Listen).
	listeners listeners
	// warns rate-limits the warnings a server's requests can cause.
	warns *warnlimit.Limiter

	// persistMu serializes "don't ask again" writes to config files.
	persistMu sync.Mutex
}

// New wires a host for cfg. Nothing starts until Start.
func New(cfg *config.Config, opts Options) (*Host, error) {
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	bus := events.NewBus(events.BusOptions{Logger: log.Named("events")})
	bus.AddSink(events.LogSink(log.Named("event")))
	h := &Host{Bus: bus, opts: opts, log: log, cfg: cfg, cwd: opts.Cwd, warns: warnlimit.New(warnlimit.Options{})}
	if h.cwd == "" {
		h.cwd, _ = os.Getwd()
	}
	if cfg.AuditLog != "" {
		signer, err := ledger.LoadSigner(cfg.AuditSigning.KeyFile, cfg.AuditSigning.KeyEnv, opts.LookupEnv)
		if err != nil {
			bus.Close()
			return nil, err
		}
		a, err := events.OpenAudit(cfg.AuditLog, events.WithAuditLogger(log.Named("audit")),
			events.WithAuditRedactor(h.secrets.RedactRecord),
			events.WithLedgerRotation(events.LedgerRotation{MaxBytes: cfg.AuditRotate.MaxBytes, MaxAge: cfg.AuditRotate.MaxAge}),
			events.WithLedgerSigner(signer, cfg.AuditSigning.CheckpointEvery))
		if err != nil {
			bus.Close()
			return nil, fmt.Errorf("opening audit log: %w", err)
		}
		h.audit = a
		bus.AddSink(a)
	}
	for _, s := range opts.Sinks {
		bus.AddSink(s)
	}

	h.local = launch.NewLocal(launch.LocalOptions{Logger: log.Named("launch")})
	// --- plugins (host/pluginhost): nothing starts before first use.
	h.plugins = pluginhost.New(cfg, pluginhost.Options{Logger: log, Events: bus, LookupEnv: opts.LookupEnv, Cwd: h.cwd})
	h.envs = h.environments(cfg)
	h.shadow = approval.NewShadowRunner()
	h.approval = approval.New(h.approvalOptions(cfg))

	mo := opts.Manager
	mo.Logger, mo.Events, mo.Environments, mo.LookupEnv = log, bus, h.envs, opts.LookupEnv
	mo.Secrets = &h.secrets
	if opts.ClientInfo != nil {
		mo.ClientInfo = opts.ClientInfo
	}
	h.wireUpstream(&mo)
	h.Manager = manager.New(cfg, mo)
	h.executor = h.newExecutor(cfg)
	h.limiter = ratelimit.New(rateLimits(cfg.Serve.Limits), h.opts.LimitClock)
	h.pipeline = h.newPipeline()
	h.embedder = h.newEmbedder(cfg, nil, nil)
	return h, nil
}

func (h *Host) environments(cfg *config.Config) *environment.Registry {
	return environment.New(cfg, environment.Options{Local: h.local, Plugin: h.plugins.Launcher})
}

func (h *Host) approvalOptions(cfg *config.Config) approval.Options {
	// --- plugins: hook blocks in config order, then Options.Hooks; the
	// Guardian block unless Options.Reviewer overrides it.
	reviewer := h.opts.Reviewer
	if reviewer == nil {
		reviewer = h.plugins.Reviewer()
	}
	var pre []approval.PreToolUseHook
	var post []approval.PostToolUseHook
	for _, a := range h.plugins.HookAdapters() {
		pre, post = append(pre, a), append(post, a)
	}
	return approval.Options{
		Approval:     cfg.Approval,
		Server:       cfg.Server,
		Hooks:        append(h.plugins.Hooks(), h.opts.Hooks...),
		ShadowHooks:  h.plugins.ShadowHooks(),
		ShadowRunner: h.shadow,
		PreToolUse:   append(pre, h.opts.PreToolUse...),
		PostToolUse:  append(post, h.opts.PostToolUse...),
		Reviewer:     reviewer,
		Persist:      h.rememberApproval,
		// The operator decides whether an upstream client may write
		// persistent approvals into their config; a read-only config
		// (a ConfigMap) cannot take them at all.
		NoPersistentApproval: h.opts.Serving && !cfg.Serve.AllowPersistentApproval || h.readOnlyConfig(cfg),
		Events:               h.Bus,
		AuditWritable:        h.auditGate(cfg),
		Logger:               h.log,
	}
}

// auditGate is the approval procedure's audit check: with audit {
// on_error = "deny" } a call is refused while the audit log cannot be
// written; otherwise (the default, "log") failures are logged and
// counted and calls run. The log's path is fixed for the host's life;
// on_error follows reloads.
func (h *Host) auditGate(cfg *config.Config) func() error {
	if cfg.AuditOnError != config.AuditOnErrorDeny {
		return nil
	}
	if h.audit == nil {
		// A reload added the audit log: it opens only at start, and
		// "deny" means nothing runs unrecorded.
		return func() error {
			return fmt.Errorf("the audit log %s is not open: it was configured after toolgate started; restart toolgate", cfg.AuditLog)
		}
	}
	return h.audit.Writable
}

func (h *Host) newExecutor(cfg *config.Config) *execution.Executor {
	return execution.New(execution.Options{
		Caller:      h.Manager,
		Model:       executionModel(cfg.Model),
		Permissions: string(cfg.Approval.Permissions),
		Cwd:         h.cwd,
		CallMeta:    callMetaServers(cfg),
		// Results are serialized only where something keeps them.
		RecordResults: cfg.AuditLog != "" || h.log.IsDebug(),
		Logger:        h.log.Named("execution"),
	})
}

// callMetaServers names the servers with call_meta = true.
func callMetaServers(cfg *config.Config) map[string]bool {
	var set map[string]bool
	for _, s := range cfg.Servers {
		if s.CallMeta {
			if set == nil {
				set = map[string]bool{}
			}
			set[s.Name] = true
		}
	}
	return set
}

// newPipeline builds the request pipeline from the parts in force; the
// caller holds mu or owns h.
func (h *Host) newPipeline() *pipeline.Pipeline {
	var admit func(*identity.Caller, string) error
	if limiter := h.limiter; limiter != nil {
		admit = limiter.Admit
	}
	return pipeline.New(pipeline.Options{
		Approver: h.approval,
		Executor: h.executor,
		Servers:  h.Manager,
		Admit:    admit,
		Running:  &h.running,
		Events:   h.Bus,
	})
}

// Pipeline returns the request pipeline in force: every request to a
// server, from any door, goes through it.
func (h *Host) Pipeline() *pipeline.Pipeline {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.pipeline
}

// Config returns the configuration in force.
func (h *Host) Config() *config.Config {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.cfg
}

// Plugins returns the plugin host (hook adapters for the pre- and
// post-call steps, plugin status).
func (h *Host) Plugins() *pluginhost.Plugins { return h.plugins }

// Approval returns the approval procedure in force.
func (h *Host) Approval() *approval.Procedure {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.approval
}

// Start begins connecting every server; see manager.Manager.Start.
func (h *Host) Start(ctx context.Context) { h.Manager.Start(ctx) }

// NewStep starts a step of the given approval session ("" = a new one).
// The step captures the catalog on first use.
func (h *Host) NewStep(sessionID string) *exposure.Step {
	h.mu.RLock()
	cfg, pl, emb := h.cfg, h.pipeline, h.embedder
	h.mu.RUnlock()
	return exposure.NewStep(exposure.Options{
		Snapshots:  h.Manager,
		Pipeline:   pl,
		SessionID:  sessionID,
		Model:      executionModel(cfg.Model),
		Events:     h.Bus,
		Logger:     h.log,
		Policy:     exposure.PolicyFrom(cfg),
		Indexes:    &h.indexes,
		Embeddings: emb,
	})
}

// newEmbedder returns the client of cfg's embeddings endpoint: current
// when the block did not change from old, so its cache survives a
// reload. An api_key_env_var that is not set is logged, and the ranking
// stays BM25 alone: a missing key must not keep toolgate from starting.
func (h *Host) newEmbedder(cfg, old *config.Config, current *embeddings.Client) *embeddings.Client {
	e := cfg.Exposure.Embeddings
	if e == nil {
		return nil
	}
	if current != nil && old != nil && old.Exposure.Embeddings != nil && *old.Exposure.Embeddings == *e {
		return current
	}
	var key string
	if e.APIKeyEnvVar != "" {
		v, ok := h.opts.LookupEnv(e.APIKeyEnvVar)
		if !ok || v == "" {
			h.log.Warn("exposure embeddings: the API key variable is not set; tool_search ranks with BM25 alone",
				"api_key_env_var", e.APIKeyEnvVar)
			return nil
		}
		key = v
	}
	return embeddings.New(embeddings.Config{URL: e.URL, Model: e.Model, APIKey: key})
}

// Apply puts a new configuration in force without a restart: servers
// whose connection settings did not change keep running (see
// manager.Manager.Apply); approval, execution and exposure settings apply
// to new steps; what the user allowed for a session is kept, while
// persistent approvals come from cfg alone (one deleted from the file is
// revoked, see approval.Procedure.Reconfigured). The audit log
// path is fixed for the life of the host.
func (h *Host) Apply(cfg *config.Config) manager.ApplyResult {
	h.mu.Lock()
	old := h.cfg
	h.cfg = cfg
	h.plugins.Apply(cfg) // --- plugins: keeps unchanged blocks' processes, retires the rest
	h.envs = h.environments(cfg)
	h.approval = h.approval.Reconfigured(h.approvalOptions(cfg))
	h.executor = h.newExecutor(cfg)
	if !slices.EqualFunc(old.Serve.Limits, cfg.Serve.Limits, sameLimit) {
		// Changed limits start with full buckets.
		h.limiter = ratelimit.New(rateLimits(cfg.Serve.Limits), h.opts.LimitClock)
	}
	h.pipeline = h.newPipeline()
	h.embedder = h.newEmbedder(cfg, old, h.embedder)
	envs := h.envs
	h.mu.Unlock()
	if old.AuditLog != cfg.AuditLog {
		h.log.Warn("audit_log changed; the new path takes effect after a restart", "path", old.AuditLog)
	}
	res := h.Manager.Apply(cfg, envs)
	h.Bus.Emit(events.ConfigApplied{At: time.Now(), Kept: res.Kept, Updated: res.Updated,
		Restarted: res.Restarted, Removed: res.Removed, Added: res.Added})
	return res
}

// readOnlyConfig reports (and logs, so the operator knows why "Allow and
// don't ask me again" is not offered) a configuration that cannot be
// rewritten, such as one mounted from a Kubernetes ConfigMap.
func (h *Host) readOnlyConfig(cfg *config.Config) bool {
	err := config.ReadOnly(cfg.Paths...)
	if err == nil {
		return false
	}
	if !h.opts.Serving || cfg.Serve.AllowPersistentApproval {
		h.log.Warn("\"Allow and don't ask me again\" is not offered: toolgate never writes a read-only configuration. "+
			"Approvals last for a session; to approve a tool for good, add approval_mode = \"approve\" to its tool block in the config's source",
			"reason", err)
	}
	return true
}

// rememberApproval writes approval_mode = "approve" for a tool into the
// file that defines its server.
func (h *Host) rememberApproval(server, tool, definition string) error {
	s, ok := h.Config().Server(server)
	if !ok || s.DeclRange.Filename == "" {
		return fmt.Errorf("server %q has no config file to write to", server)
	}
	if err := config.ReadOnly(s.DeclRange.Filename); err != nil {
		return fmt.Errorf("%w; nothing was written. Add approval_mode = \"approve\" for tool %q to server %q in the source of the config (a ConfigMap: edit and apply it)", err, tool, server)
	}
	h.persistMu.Lock()
	defer h.persistMu.Unlock()
	return config.RememberToolApproval(s.DeclRange.Filename, server, tool, definition)
}

// Close stops every server and process, then flushes and closes the
// audit log. Idempotent.
func (h *Host) Close() error {
	err := h.Manager.Close()
	// Shadow hooks still running are cancelled before their plugins stop.
	h.shadow.Close()
	// --- plugins: after the servers, whose processes a launcher plugin may run.
	err = errors.Join(err, h.plugins.Close())
	h.Bus.Close()
	if h.audit != nil {
		err = errors.Join(err, h.audit.Close())
	}
	return err
}
