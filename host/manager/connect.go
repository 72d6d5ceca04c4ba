package manager

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/environment"
	"github.com/toolgate/toolgate/host/launch"
	"github.com/toolgate/toolgate/host/mcpclient"
)

// connected is a client that finished its handshake and first listing.
type connected struct {
	client *mcpclient.Client
	tools  []*mcp.Tool
	offers offers
	target environment.Target
	// degraded says why the server is usable but not whole (it listed
	// more tools than max_tools, or pages past the page cap); nil when it
	// is whole.
	degraded error
}

// listTools lists c's tools for s. A server over its max_tools limit or
// the page cap is not an error: the tools collected are returned with the
// reason it is degraded.
func (m *Manager) listTools(ctx context.Context, c *mcpclient.Client) (tools []*mcp.Tool, degraded, err error) {
	tools, err = c.ListTools(ctx)
	if errors.Is(err, mcpclient.ErrListTruncated) {
		return tools, err, nil
	}
	return tools, nil, err
}

// errStartupTimeout marks a startup that ran out of startup_timeout_sec,
// as opposed to one the caller cancelled.
var errStartupTimeout = errors.New("startup timed out")

// maxListRounds bounds re-listing during startup when the server keeps
// announcing list changes while we list.
const maxListRounds = 3

// connect builds, connects and lists a new client for s, bounded by the
// startup timeout. It starts a new generation of s, so callbacks of older
// clients are ignored. The returned error is the user-facing failure text.
func (m *Manager) connect(ctx context.Context, s *server) (*connected, error) {
	m.mu.Lock()
	cfg := s.cfg
	s.gen++
	gen := s.gen
	s.changes = 0
	m.mu.Unlock()
	ctx, cancel := context.WithTimeoutCause(ctx, cfg.StartupTimeout, errStartupTimeout)
	defer cancel()

	opts, target, err := m.clientOptions(s, cfg, gen)
	if err != nil {
		return nil, startFailure(cfg, err)
	}
	c, err := mcpclient.New(opts)
	if err != nil {
		return nil, startFailure(cfg, err)
	}
	if err := m.connectWithin(ctx, c); err != nil {
		return nil, m.startError(ctx, cfg, err)
	}
	var tools []*mcp.Tool
	var degraded error
	for round := 0; ; round++ {
		m.mu.Lock()
		before := s.changes
		m.mu.Unlock()
		tools, degraded, err = m.listTools(ctx, c)
		if err != nil {
			m.closeInBackground(c)
			return nil, m.startError(ctx, cfg, err)
		}
		m.mu.Lock()
		after := s.changes
		m.mu.Unlock()
		// A server that adds tools right after initialized announces them
		// while we list: list again so the host never starts stale.
		if after == before || round+1 >= maxListRounds {
			break
		}
	}
	o, odeg := m.listOffers(ctx, s, c)
	m.resubscribe(ctx, s, c)
	return &connected{client: c, tools: m.filterTools(s, tools), offers: o, target: target, degraded: errors.Join(degraded, odeg)}, nil
}

// connectWithin runs c.Connect but returns when ctx ends, without
// waiting for the server to be killed: a server that hangs in its
// handshake and ignores SIGTERM takes the launcher's grace periods to
// end, and its startup timeout is reported when it expires, not after
// the kill. The kill finishes on the manager's wait group (Close waits
// for it). connect's callers run on that group, so Add is safe here.
func (m *Manager) connectWithin(ctx context.Context, c *mcpclient.Client) error {
	done := make(chan error, 1)
	go func() { done <- c.Connect(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		<-done // Connect returns once the process is gone
		_ = c.Close()
	}()
	return context.Cause(ctx)
}

// closeInBackground closes a client that failed its startup without
// holding the report up (see connectWithin).
func (m *Manager) closeInBackground(c *mcpclient.Client) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		_ = c.Close()
	}()
}

// startError turns a connect or list error into the text a user reads.
func (m *Manager) startError(ctx context.Context, cfg config.Server, err error) error {
	if errors.Is(context.Cause(ctx), errStartupTimeout) {
		return &StartupError{Server: cfg.Name, Err: fmt.Errorf("%w: %w", errStartupTimeout, err),
			Text: fmt.Sprintf("MCP client for %q timed out after %s seconds. Add or adjust startup_timeout_sec in the server %q block%s.",
				cfg.Name, seconds(cfg.StartupTimeout.Seconds()), cfg.Name, at(cfg))}
	}
	var auth *mcpclient.AuthError
	if errors.As(err, &auth) {
		return &StartupError{Server: cfg.Name, Err: err, Text: authHint(cfg, auth)}
	}
	if text, ok := tokenRefusedHint(cfg, err); ok {
		return &StartupError{Server: cfg.Name, Err: err, Text: text}
	}
	return startFailure(cfg, err)
}

func startFailure(cfg config.Server, err error) error {
	return &StartupError{Server: cfg.Name, Err: err,
		Text: fmt.Sprintf("MCP client for %q failed to start: %v", cfg.Name, err)}
}

// authHint says how to supply credentials for a server that refused us.
func authHint(cfg config.Server, e *mcpclient.AuthError) string {
	if text, ok := oauthHint(cfg, e); ok {
		return text
	}
	switch {
	case e.Status == http.StatusForbidden && e.Scope != "":
		return fmt.Sprintf("The %s MCP server needs more access (insufficient scope %q). Run `toolgate login %s` to grant it, or use a token with that scope.", cfg.Name, e.Scope, cfg.Name)
	case cfg.BearerTokenEnvVar != "":
		return fmt.Sprintf("The %s MCP server rejected the token in %s (HTTP %d). Put a valid token in that environment variable, or remove bearer_token_env_var and run `toolgate login %s`.", cfg.Name, cfg.BearerTokenEnvVar, e.Status, cfg.Name)
	case e.Challenge:
		return fmt.Sprintf("The %s MCP server is not logged in. Run `toolgate login %s`, or set bearer_token_env_var in the server %q block%s to an environment variable holding a token.", cfg.Name, cfg.Name, cfg.Name, at(cfg))
	}
	return fmt.Sprintf("The %s MCP server refused the connection (HTTP %d). Set bearer_token_env_var or http_headers in the server %q block%s to supply credentials.", cfg.Name, e.Status, cfg.Name, at(cfg))
}

// StartupError is why a server did not become ready. Text is the message
// for users; Err keeps the cause for errors.Is/As.
type StartupError struct {
	Server string
	Text   string
	Err    error
}

func (e *StartupError) Error() string { return e.Text }
func (e *StartupError) Unwrap() error { return e.Err }

func seconds(s float64) string { return strconv.FormatFloat(s, 'f', -1, 64) }

func at(cfg config.Server) string {
	if cfg.DeclRange.Filename == "" {
		return ""
	}
	return fmt.Sprintf(" (%s:%d)", cfg.DeclRange.Filename, cfg.DeclRange.Start.Line)
}

// clientOptions builds the mcpclient options of one connection attempt.
func (m *Manager) clientOptions(s *server, cfg config.Server, gen int) (mcpclient.Options, environment.Target, error) {
	name := cfg.Name
	opts := mcpclient.Options{
		Name:                name,
		ProtocolVersion:     cfg.ProtocolVersion,
		ClientInfo:          m.opts.ClientInfo,
		Logger:              m.opts.Logger.Named("server").With("server", name),
		Secrets:             m.opts.Secrets,
		MaxTools:            cfg.MaxTools,
		MaxDescriptionBytes: cfg.MaxDescriptionBytes,
		MaxSchemaBytes:      cfg.MaxSchemaBytes,
		MaxResultBytes:      m.resultCap(),
		Handlers: mcpclient.Handlers{
			// Any list change re-lists tools, resources, templates and
			// prompts together: one debounce, one revision.
			ToolsChanged:     func() { m.toolsChanged(s, gen) },
			ResourcesChanged: func() { m.toolsChanged(s, gen) },
			PromptsChanged:   func() { m.toolsChanged(s, gen) },
		},
	}
	if m.opts.Elicit != nil {
		opts.Handlers.Elicit = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return m.opts.Elicit(ctx, name, req)
		}
	}
	if m.opts.Sample != nil && cfg.OffersSampling() {
		opts.Handlers.Sample = func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			return m.opts.Sample(ctx, name, req)
		}
	}
	if m.opts.ResourceUpdated != nil {
		opts.Handlers.ResourceUpdated = func(uri string) { m.opts.ResourceUpdated(name, uri) }
	}
	if m.opts.ServerLog != nil {
		opts.Handlers.Log = func(ctx context.Context, p *mcp.LoggingMessageParams) { m.opts.ServerLog(ctx, name, p) }
	}

	if cfg.Transport == config.TransportHTTP {
		h, err := m.httpOptions(cfg)
		if err != nil {
			return opts, environment.Target{}, err
		}
		opts.HTTP = h
		return opts, environment.Target{}, nil
	}

	m.mu.Lock()
	envs := m.opts.Environments
	m.mu.Unlock()
	if envs == nil {
		return opts, environment.Target{}, errors.New("no environment registry: stdio servers cannot be started")
	}
	target, err := envs.Resolve(cfg.Environment)
	if err != nil {
		return opts, target, fmt.Errorf("server %q%s: %w", name, at(cfg), err)
	}
	env, err := launch.BuildEnv(m.lookupEnv, launchEnvVars(cfg.EnvVars), cfg.Env, target.Remote)
	if err != nil {
		return opts, target, fmt.Errorf("building environment: %w", err)
	}
	dir := cfg.Cwd
	if dir == "" {
		dir = target.Cwd
	}
	if dir == "" && !target.Remote {
		dir, _ = os.Getwd()
	}
	opts.Stdio = &mcpclient.Stdio{
		Launcher: target.Launcher,
		Spec: launch.Spec{Server: name, Command: cfg.Command, Args: cfg.Args, Env: env, Dir: dir,
			RemoteEnv: remoteEnv(cfg, target)},
	}
	return opts, target, nil
}

func (m *Manager) lookupEnv(k string) (string, bool) {
	if m.opts.LookupEnv != nil {
		return m.opts.LookupEnv(k)
	}
	return os.LookupEnv(k)
}

// httpOptions resolves the headers of an HTTP server. Values are secrets:
// errors name variables, never their contents.
func (m *Manager) httpOptions(cfg config.Server) (*mcpclient.HTTP, error) {
	h := http.Header{}
	for k, v := range cfg.HTTPHeaders {
		h.Set(k, v)
	}
	for k, envName := range cfg.EnvHTTPHeaders {
		if v, ok := m.lookupEnv(envName); ok && strings.TrimSpace(v) != "" {
			h.Set(k, v)
		}
	}
	if cfg.BearerTokenEnvVar != "" {
		v, ok := m.lookupEnv(cfg.BearerTokenEnvVar)
		switch {
		case !ok:
			return nil, fmt.Errorf("Environment variable %s for MCP server '%s' is not set", cfg.BearerTokenEnvVar, cfg.Name)
		case strings.TrimSpace(v) == "":
			return nil, fmt.Errorf("Environment variable %s for MCP server '%s' is empty", cfg.BearerTokenEnvVar, cfg.Name)
		}
		h.Set("Authorization", "Bearer "+strings.TrimSpace(v))
	}
	return m.withOAuth(cfg, &mcpclient.HTTP{URL: cfg.URL, Header: h, Client: m.opts.HTTPClient})
}

// filterTools applies s's enabled_tools/disabled_tools to a listing.
func (m *Manager) filterTools(s *server, tools []*mcp.Tool) []*mcp.Tool {
	m.mu.Lock()
	filter := s.filter
	m.mu.Unlock()
	out := tools[:0:0]
	for _, t := range tools {
		if t != nil && filter.Allows(t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// remoteEnv lists the env_vars read on the executor's side, for launchers
// that run servers elsewhere.
func remoteEnv(cfg config.Server, target environment.Target) []string {
	if !target.Remote {
		return nil
	}
	return launch.RemoteEnvNames(launchEnvVars(cfg.EnvVars))
}

// launchEnvVars is the one translation of a server's env_vars into
// host/launch's EnvVar, which takes no config types. The loader has
// already refused a source other than "local" and "remote".
func launchEnvVars(vars []config.EnvVar) []launch.EnvVar {
	out := make([]launch.EnvVar, len(vars))
	for i, v := range vars {
		out[i] = launch.EnvVar{Name: v.Name, Remote: v.Source == config.EnvSourceRemote}
	}
	return out
}

// resultCap is the max_result_bytes connections enforce: the configured
// one, or config.DefaultMaxResultBytes.
func (m *Manager) resultCap() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.maxResult > 0 {
		return m.maxResult
	}
	return config.DefaultMaxResultBytes
}
