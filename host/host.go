package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/environment"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/execution"
	"github.com/toolgate/toolgate/host/exposure"
	"github.com/toolgate/toolgate/host/launch"
	"github.com/toolgate/toolgate/host/manager"
)

// Options configures a Host.
type Options struct {
	// Logger is the root logger; nil discards.
	Logger hclog.Logger
	// Sinks receive every event in addition to the log and the audit file.
	Sinks []events.Sink
	// LookupEnv reads the host environment; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// ClientInfo identifies the host to servers; nil means toolgate.
	ClientInfo *mcp.Implementation
	// Asker answers the user path of approval and server-initiated
	// elicitations: a terminal, the gateway's upstream client. nil means
	// nobody: calls that need a human are denied, elicitations declined.
	Asker approval.Asker
	// Hooks are PermissionRequest hooks, in config order.
	Hooks []approval.Hook
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

// Host is one running toolgate: configuration, event bus, audit log and
// the connection manager. It holds no logic of its own.
type Host struct {
	Config   *config.Config
	Bus      *events.Bus
	Manager  *manager.Manager
	Approval *approval.Procedure
	Executor *execution.Executor

	log   hclog.Logger
	audit *events.AuditSink
	// persistMu serializes "don't ask again" writes to config files.
	persistMu sync.Mutex
}

// New wires a host for cfg. Nothing starts until Start.
func New(cfg *config.Config, opts Options) (*Host, error) {
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	bus := events.NewBus(events.BusOptions{Logger: log.Named("events")})
	bus.AddSink(events.LogSink(log.Named("event")))
	h := &Host{Config: cfg, Bus: bus, log: log}
	if cfg.AuditLog != "" {
		a, err := events.OpenAudit(cfg.AuditLog)
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

	envs := environment.New(cfg, environment.Options{
		Local: launch.NewLocal(launch.LocalOptions{Logger: log.Named("launch")}),
	})
	h.Approval = approval.New(approval.Options{
		Approval: cfg.Approval,
		Server:   cfg.Server,
		Hooks:    opts.Hooks,
		Reviewer: opts.Reviewer,
		Asker:    opts.Asker,
		Persist:  h.rememberApproval,
		Events:   bus,
		Logger:   log.Named("approval"),
	})

	mo := opts.Manager
	mo.Logger, mo.Events, mo.Environments, mo.LookupEnv = log, bus, envs, lookup
	if opts.ClientInfo != nil {
		mo.ClientInfo = opts.ClientInfo
	}
	mo.Elicit = func(ctx context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return h.Approval.Elicit(ctx, server, req.Params)
	}
	h.Manager = manager.New(cfg, mo)

	cwd := opts.Cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	h.Executor = execution.New(execution.Options{
		Caller:      h.Manager,
		Model:       cfg.Model,
		Permissions: cfg.Approval.Permissions,
		Cwd:         cwd,
		Events:      bus,
		Logger:      log.Named("execution"),
	})
	return h, nil
}

// NewStep starts a step of the given approval session ("" = a new one).
// The step captures the catalog on first use.
func (h *Host) NewStep(sessionID string) *exposure.Step {
	return exposure.NewStep(exposure.Options{
		Catalogs:  h.Manager,
		Approver:  h.Approval,
		Executor:  h.Executor,
		SessionID: sessionID,
		Model:     h.Config.Model,
		Events:    h.Bus,
		Logger:    h.log,
	})
}

// rememberApproval writes approval_mode = "approve" for a tool into the
// file that defines its server.
func (h *Host) rememberApproval(server, tool string) error {
	s, ok := h.Config.Server(server)
	if !ok || s.DeclRange.Filename == "" {
		return fmt.Errorf("server %q has no config file to write to", server)
	}
	h.persistMu.Lock()
	defer h.persistMu.Unlock()
	return config.RememberToolApproval(s.DeclRange.Filename, server, tool)
}

// Start begins connecting every server; see manager.Manager.Start.
func (h *Host) Start(ctx context.Context) { h.Manager.Start(ctx) }

// Close stops every server and process, then flushes and closes the
// audit log. Idempotent.
func (h *Host) Close() error {
	err := h.Manager.Close()
	h.Bus.Close()
	if h.audit != nil {
		err = errors.Join(err, h.audit.Close())
	}
	return err
}
