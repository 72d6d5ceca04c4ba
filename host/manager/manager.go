package manager

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/catalog"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/environment"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/internal/warnlimit"
	"github.com/toolgate/toolgate/host/mcpclient"
)

// Environments resolves where a stdio server runs.
type Environments interface {
	Resolve(name string) (environment.Target, error)
}

// Options configures a Manager. Zero values are documented per field.
type Options struct {
	// Logger receives lifecycle logs; nil discards.
	Logger hclog.Logger
	// Events receives startup, state and catalog events; nil discards.
	Events events.Sink
	// Environments resolves a server's environment to a launcher.
	// Required when any stdio server is configured.
	Environments Environments
	// LookupEnv reads the host's environment (env_vars, bearer tokens,
	// env_http_headers); nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// ClientInfo identifies the host to servers; nil means toolgate.
	ClientInfo *mcp.Implementation
	// Elicit answers server-initiated elicitations; nil declines them.
	Elicit func(ctx context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	// Sample forwards a server's sampling/createMessage (toolgate
	// serve). Servers whose config has forward_sampling get the sampling
	// capability and this handler; nil leaves sampling undeclared.
	Sample func(ctx context.Context, server string, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error)
	// Secrets, when set, receives the secrets of every server's clients
	// (mcpclient.Options.Secrets), for sinks that redact records about
	// any server (the audit log).
	Secrets *mcpclient.Secrets
	// ServerLog receives notifications/message from servers, each before
	// the results its server sent after it. It runs on the server
	// connection's read path and must not block; nil logs them.
	ServerLog func(ctx context.Context, server string, p *mcp.LoggingMessageParams)
	// ResourceUpdated receives notifications/resources/updated for the
	// resources subscribed with Subscribe. It runs on the server
	// connection's read path and must not block.
	ResourceUpdated func(server, uri string)
	// NameLimit bounds flat model names; 0 means the config default (64).
	NameLimit int
	// HTTPClient carries Streamable HTTP requests; nil means a default
	// client (never with an overall timeout).
	HTTPClient *http.Client
	// RelistDelay debounces tools/list_changed bursts; 0 means 100 ms.
	RelistDelay time.Duration
	// RelistMaxWait bounds how long a burst that never pauses can put a
	// re-list off; 0 means 1 s. A server that announces changes without
	// end is still re-listed about once per RelistMaxWait.
	RelistMaxWait time.Duration
	// Restart is the crash-restart backoff, also used to retry a server
	// whose first start failed (unless its block sets retry_startup =
	// false); the zero value means 1 s doubling to 30 s, each wait less
	// up to 20% jitter. Set Restart.Disabled to never restart or retry.
	Restart RestartPolicy
}

// RestartPolicy says how crashed servers come back.
type RestartPolicy struct {
	Disabled bool
	Initial  time.Duration // first delay; 0 = 1 s
	Max      time.Duration // cap; 0 = 30 s
	// StableAfter is how long a restarted server must stay up before a
	// crash starts the backoff again from Initial; 0 = 60 s. A server
	// that crashes sooner is in a crash loop: each restart waits twice as
	// long as the last, up to Max.
	StableAfter time.Duration
}

// Server states beyond the startup ones of package events.
const (
	StatusDisabled = "disabled" // enabled = false: never started
	StatusPending  = "pending"  // Start not called yet
)

// Manager owns the clients of every enabled server.
type Manager struct {
	opts  Options
	log   hclog.Logger
	sink  events.Sink
	warns *warnlimit.Limiter // per-message warnings (relists), rate-limited
	limit int
	// maxResult is serve's max_result_bytes, which every connection
	// enforces where it reads an answer (mcpclient.Options.MaxResultBytes).
	maxResult int
	order     []string           // server names in config order
	ctx       context.Context    // lifetime of every client; cancelled by Close
	cancel    context.CancelFunc // cancels ctx
	wg        sync.WaitGroup     // every goroutine the manager starts

	mu         sync.Mutex
	servers    map[string]*server
	envConfigs map[string]config.Environment // environment blocks, to see which changed on Apply
	revision   uint64
	cached     *Snapshot // normalized catalog of revision, nil = stale
	started    bool
	closed     bool
	complete   chan struct{} // closed after startup_complete
	// settledOne is closed, and replaced, each time a server's first
	// start attempt ends (see Unsettled).
	settledOne chan struct{}
	summary    events.StartupComplete
}

// server is the manager's record of one server block.
type server struct {
	name string // fixed; the rest is guarded by Manager.mu

	cfg         config.Server
	filter      catalog.Filter
	offerFilter offerFilters

	status string
	err    error
	client *mcpclient.Client
	gen    int // bumped per client, so stale callbacks are ignored
	tools  []*mcp.Tool
	offers offers // resources, templates and prompts
	// subscribed are the resource URIs subscribed through Subscribe,
	// subscribed again when a restarted client becomes ready.
	subscribed map[string]bool
	init       *mcp.InitializeResult
	target     environment.Target
	restarts   int
	// startupRetries counts attempts to start a server whose first start
	// failed (see retryStartup).
	startupRetries int
	degraded       error         // why a ready server is not whole (a listing cut by a limit); nil: whole
	readyAt        time.Time     // when the current client became ready
	crashes        int           // crashes in a row, each within StableAfter of the last start
	retired        bool          // removed or replaced by Apply: never act again
	changes        int           // list_changed notifications seen for gen
	relisting      *time.Timer   // pending debounced relist
	relistBy       time.Time     // the pending relist runs by then, whatever arrives
	listing        bool          // a relist is running
	listAgain      bool          // a relist came due while one was running
	settled        chan struct{} // closed when the first startup attempt ended
}

// New builds a manager for cfg's servers. Nothing starts until Start.
func New(cfg *config.Config, opts Options) *Manager {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Events == nil {
		opts.Events = events.SinkFunc(func(events.Event) {})
	}
	if opts.RelistDelay <= 0 {
		opts.RelistDelay = 100 * time.Millisecond
	}
	if opts.RelistMaxWait <= 0 {
		opts.RelistMaxWait = time.Second
	}
	if opts.Restart.Initial <= 0 {
		opts.Restart.Initial = time.Second
	}
	if opts.Restart.Max <= 0 {
		opts.Restart.Max = 30 * time.Second
	}
	if opts.Restart.StableAfter <= 0 {
		opts.Restart.StableAfter = time.Minute
	}
	limit := opts.NameLimit
	if limit == 0 {
		limit = cfg.Exposure.NameLimit
	}
	if limit == 0 {
		limit = config.DefaultNameLimit
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{
		opts:       opts,
		log:        opts.Logger.Named("manager"),
		warns:      warnlimit.New(warnlimit.Options{}),
		sink:       opts.Events,
		limit:      limit,
		maxResult:  cfg.Serve.MaxResultBytes,
		ctx:        ctx,
		cancel:     cancel,
		servers:    map[string]*server{},
		complete:   make(chan struct{}),
		settledOne: make(chan struct{}),
	}
	m.envConfigs = envConfigs(cfg)
	for _, sc := range cfg.Servers {
		m.servers[sc.Name] = newServer(sc)
		m.order = append(m.order, sc.Name)
	}
	return m
}

// serverFilter compiles a server's enabled_tools / disabled_tools.
// config.Load has rejected bad patterns already; a block that bypassed it
// gets a filter that allows nothing (catalog.NewFilter fails closed).
func serverFilter(sc config.Server) catalog.Filter {
	f, _ := catalog.NewFilter(sc.EnabledTools, sc.DisabledTools)
	return f
}

// newServer returns the record of a server block that has not started.
func newServer(sc config.Server) *server {
	s := &server{
		name:        sc.Name,
		cfg:         sc,
		filter:      serverFilter(sc),
		offerFilter: newOfferFilters(sc),
		status:      StatusPending,
		settled:     make(chan struct{}),
	}
	if !sc.Enabled {
		s.status = StatusDisabled
		close(s.settled)
	}
	return s
}

// Start begins connecting every enabled server concurrently and returns at
// once. Cancelling ctx cancels servers still starting (they report
// cancelled); servers that are ready keep running until Close. Use
// WaitStartup to wait for the summary.
func (m *Manager) Start(ctx context.Context) {
	m.mu.Lock()
	if m.started || m.closed {
		m.mu.Unlock()
		return
	}
	m.started = true
	var starting []*server
	for _, name := range m.order {
		if s := m.servers[name]; s.cfg.Enabled {
			s.status = events.StatusStarting
			starting = append(starting, s)
		}
	}
	m.mu.Unlock()

	// The startup of each server is bounded by both the caller's ctx
	// (Ctrl-C during startup) and the manager's lifetime.
	startCtx, stop := mergeCancel(ctx, m.ctx)
	var pending sync.WaitGroup
	for _, s := range starting {
		m.sink.Emit(events.ServerStartup{At: time.Now(), Server: s.name, Status: events.StatusStarting})
		pending.Add(1)
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			defer pending.Done()
			m.startServer(startCtx, s)
		}()
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		pending.Wait()
		stop()
		m.finishStartup()
	}()
}

// startServer runs the first connection attempt of s.
func (m *Manager) startServer(ctx context.Context, s *server) {
	c, err := m.connect(ctx, s)
	m.mu.Lock()
	defer m.mu.Unlock()
	defer func() {
		close(s.settled)
		close(m.settledOne)
		m.settledOne = make(chan struct{})
	}()
	if err == nil && (m.closed || s.retired) {
		// Close or Apply ran while we connected and did not see this client.
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			_ = c.client.Close()
		}()
		err = ctx.Err()
		if err == nil {
			err = context.Canceled
		}
	}
	switch {
	case err == nil:
		m.becomeReady(s, c)
		m.sink.Emit(events.ServerStartup{At: time.Now(), Server: s.name, Status: events.StatusReady,
			Tools: len(s.tools), Protocol: s.init.ProtocolVersion})
	case ctx.Err() != nil && !errors.Is(err, errStartupTimeout):
		s.status, s.err = events.StatusCancelled, errors.New("MCP startup cancelled")
		m.sink.Emit(events.ServerStartup{At: time.Now(), Server: s.name, Status: events.StatusCancelled})
	default:
		s.status, s.err = events.StatusFailed, err
		m.log.Warn("server failed to start", "server", s.name, "error", err)
		m.sink.Emit(events.ServerStartup{At: time.Now(), Server: s.name, Status: events.StatusFailed, Error: err.Error()})
		m.retryStartup(s)
	}
}

// becomeReady installs a connected client. Called with m.mu held.
func (m *Manager) becomeReady(s *server, c *connected) {
	s.client, s.tools, s.init, s.target = c.client, c.tools, c.client.InitializeResult(), c.target
	s.offers = c.offers
	s.degraded = c.degraded
	if c.degraded != nil {
		m.warns.Warn(m.log, "server degraded", "server", s.name, "reason", c.degraded)
	}
	s.status, s.err = events.StatusReady, nil
	s.readyAt = time.Now()
	m.bump()
	m.wg.Add(1)
	go m.watch(s, c.client, s.gen)
}

func (m *Manager) finishStartup() {
	m.mu.Lock()
	sum := events.StartupComplete{At: time.Now(), Ready: []string{}, Failed: []events.ServerError{}, Cancelled: []string{}}
	for _, name := range m.order {
		s := m.servers[name]
		switch s.status {
		case events.StatusReady:
			sum.Ready = append(sum.Ready, name)
		case events.StatusFailed:
			sum.Failed = append(sum.Failed, events.ServerError{Server: name, Error: s.err.Error()})
		case events.StatusCancelled:
			sum.Cancelled = append(sum.Cancelled, name)
		}
	}
	m.summary = sum
	m.mu.Unlock()
	m.sink.Emit(sum)
	close(m.complete)
}

// WaitStartup blocks until every server finished its first startup
// attempt and returns the summary.
func (m *Manager) WaitStartup(ctx context.Context) (events.StartupComplete, error) {
	select {
	case <-m.complete:
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.summary, nil
	case <-ctx.Done():
		return events.StartupComplete{}, ctx.Err()
	}
}

// Settling reports whether an enabled server has not ended its first
// start attempt (at startup, or after Apply added or restarted it): what
// it will offer is not known yet. A server that failed and retries
// (retry_startup) has settled.
func (m *Manager) Settling() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.servers {
		if s.cfg.Enabled && !isClosed(s.settled) {
			return true
		}
	}
	return false
}

// WaitSettled blocks until every enabled server known now ended its
// first start attempt (ready, failed or cancelled), or ctx ends.
func (m *Manager) WaitSettled(ctx context.Context) error {
	m.mu.Lock()
	chans := make([]chan struct{}, 0, len(m.servers))
	for _, s := range m.servers {
		chans = append(chans, s.settled)
	}
	m.mu.Unlock()
	for _, c := range chans {
		select {
		case <-c:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Unsettled returns the enabled servers, in config order, whose first
// start attempt has not ended, and a channel closed as soon as one more
// server's has. A caller that needs only some servers (a CLI call of one
// tool) waits on it instead of on every server.
func (m *Manager) Unsettled() (names []string, next <-chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, name := range m.order {
		if s := m.servers[name]; s.cfg.Enabled && !isClosed(s.settled) {
			names = append(names, name)
		}
	}
	return names, m.settledOne
}

// MayClaim reports whether server, once ready, could take modelName or
// change which tool has it (see catalog.MayClaim). An unknown server
// claims nothing.
func (m *Manager) MayClaim(server, modelName string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.servers[server]
	return s != nil && catalog.MayClaim(server, !s.cfg.Prefix, modelName)
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// RequiredError returns the aggregated failure of required servers after
// startup, or nil. Hosts exit with code 1 on it.
func (m *Manager) RequiredError() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var parts []string
	names := slices.Clone(m.order)
	sort.Strings(names)
	for _, name := range names {
		s := m.servers[name]
		if !s.cfg.Enabled || !s.cfg.Required {
			continue
		}
		switch s.status {
		case events.StatusReady:
		case events.StatusFailed, events.StatusCancelled:
			parts = append(parts, name+": "+s.err.Error())
		default:
			parts = append(parts, name+": still "+s.status)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return &RequiredError{Text: "required MCP servers failed to initialize: " + strings.Join(parts, "; ")}
}

// RequiredError is the aggregated failure of required servers.
type RequiredError struct{ Text string }

func (e *RequiredError) Error() string { return e.Text }

// bump marks the catalog changed. Called with m.mu held.
func (m *Manager) bump() {
	m.revision++
	m.cached = nil
}

// Close stops every client and process and waits for every goroutine.
// Servers still starting are cancelled. Idempotent.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		m.wg.Wait()
		return nil
	}
	m.closed = true
	var clients []*mcpclient.Client
	for _, s := range m.servers {
		if s.relisting != nil {
			s.relisting.Stop()
		}
		if s.client != nil {
			clients = append(clients, s.client)
		}
	}
	started := m.started
	m.mu.Unlock()

	m.cancel()
	var errs []error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Close(); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	m.wg.Wait()
	m.warns.Close()
	if !started {
		// Nobody will close complete: WaitStartup callers must not hang.
		m.mu.Lock()
		select {
		case <-m.complete:
		default:
			close(m.complete)
		}
		m.mu.Unlock()
	}
	return errors.Join(errs...)
}

// mergeCancel returns a ctx cancelled when either parent is.
func mergeCancel(a, b context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(a)
	stop := context.AfterFunc(b, cancel)
	return ctx, func() { stop(); cancel() }
}
