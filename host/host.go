package host

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/environment"
	"github.com/toolgate/toolgate/host/events"
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
	// Elicit answers server-initiated elicitations; nil declines them.
	Elicit func(ctx context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	// Manager overrides manager options that tests tune (restart policy,
	// relist delay). Logger, Events, Environments and LookupEnv are set
	// by New.
	Manager manager.Options
}

// Host is one running toolgate: configuration, event bus, audit log and
// the connection manager. It holds no logic of its own.
type Host struct {
	Config  *config.Config
	Bus     *events.Bus
	Manager *manager.Manager

	log   hclog.Logger
	audit *events.AuditSink
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
	mo := opts.Manager
	mo.Logger, mo.Events, mo.Environments, mo.LookupEnv = log, bus, envs, lookup
	if opts.ClientInfo != nil {
		mo.ClientInfo = opts.ClientInfo
	}
	if opts.Elicit != nil {
		mo.Elicit = opts.Elicit
	}
	h.Manager = manager.New(cfg, mo)
	return h, nil
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
