package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/internal/slogbridge"
	"github.com/toolgate/toolgate/host/internal/warnlimit"
	"github.com/toolgate/toolgate/host/launch"
	"github.com/toolgate/toolgate/host/version"
	"github.com/toolgate/toolgate/internal/safetext"
)

// State is where a Client is in its life.
type State int

const (
	StateNew        State = iota // built, Connect not called
	StateConnecting              // Connect in progress
	StateReady                   // handshake done; requests may be sent
	StateClosed                  // the session ended; see Client.Err
)

func (s State) String() string {
	switch s {
	case StateNew:
		return "new"
	case StateConnecting:
		return "connecting"
	case StateReady:
		return "ready"
	case StateClosed:
		return "closed"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Stdio selects the stdio transport: the server runs as a process that the
// given launcher starts.
type Stdio struct {
	Launcher launch.Launcher
	Spec     launch.Spec
}

// HTTP selects the Streamable HTTP transport.
type HTTP struct {
	URL string
	// Header is sent on every request (static headers, Authorization). Its
	// values are secrets as far as this package is concerned: they are
	// never logged or quoted in errors.
	Header http.Header
	// Client carries requests; nil means a client with no overall timeout
	// (an http.Client.Timeout would kill the long-lived SSE stream). Its
	// CheckRedirect is consulted only for redirects the host follows
	// anyway: same origin, same method, at most MaxRedirects (see
	// RedirectError).
	Client *http.Client
	// OAuth, when set, authorizes requests: go-sdk adds its token to
	// every request and calls Authorize on 401 and 403 (once per
	// request). A failed Authorize reaches the caller as an *AuthError.
	OAuth auth.OAuthHandler
	// Retry says how the handshake and tools/list are retried; the zero
	// value is the default (250 ms, then 1 s).
	Retry RetryPolicy
}

// Handlers receive what the server sends on its own. Every field is
// optional.
type Handlers struct {
	// ToolsChanged is called when the server announces
	// notifications/tools/list_changed. It must not block.
	ToolsChanged func()
	// ResourcesChanged and PromptsChanged are called on
	// notifications/resources/list_changed and
	// notifications/prompts/list_changed. They must not block.
	ResourcesChanged func()
	PromptsChanged   func()
	// ResourceUpdated is called on notifications/resources/updated for a
	// subscribed resource. It must not block.
	ResourceUpdated func(uri string)
	// Elicit answers a server-initiated elicitation/create. nil declines
	// every request. While it runs, tool-call timeouts of this client pause.
	Elicit func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	// Sample answers a server-initiated sampling/createMessage. When set,
	// the client declares the sampling capability; nil declares none and
	// answers each request with an error that says how to enable it.
	// While it runs, tool-call timeouts of this client pause.
	Sample func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error)
	// Log receives notifications/message from the server, each before
	// any result the server sent after it. It runs on the connection's
	// read path: it must not block. nil logs them under the client's
	// logger.
	Log func(ctx context.Context, p *mcp.LoggingMessageParams)
}

// Protocol versions this package names.
const (
	// LegacyVersion is the newest protocol negotiated with the initialize
	// handshake. Every released server answers initialize, and a server
	// on an older version replies with its own, so this is the default.
	LegacyVersion = "2025-11-25"
	// ModernVersion is the first version negotiated with server/discover.
	ModernVersion = "2026-07-28"
	// Auto is the default selection; see Options.ProtocolVersion.
	Auto = "auto"
)

// Options configures a Client. Exactly one of Stdio and HTTP must be set.
type Options struct {
	// Name is the server's config name; it names logs and errors.
	Name  string
	Stdio *Stdio
	HTTP  *HTTP

	// ProtocolVersion is "auto" (or "") or an explicit MCP version.
	//
	// "auto" opens with the legacy initialize handshake at LegacyVersion:
	// it connects to every released server, including old stdio servers
	// that silently ignore the server/discover probe go-sdk sends by
	// default (they would otherwise hang until the startup timeout). When a
	// server rejects the legacy handshake, the client retries once with
	// ModernVersion on a fresh connection. An explicit version is used as
	// is; ModernVersion or later probes with server/discover.
	ProtocolVersion string

	// ClientInfo identifies the host; nil means toolgate.
	ClientInfo *mcp.Implementation
	// Logger receives client logs and the server's stderr; nil discards.
	Logger   hclog.Logger
	Handlers Handlers
	// MaxTools is how many tools ListTools keeps; 0 means DefaultMaxTools.
	MaxTools int
	// MaxDescriptionBytes and MaxSchemaBytes cap each listed tool's
	// description and schemas (see capTool); 0 means
	// DefaultMaxDescriptionBytes and DefaultMaxSchemaBytes.
	MaxDescriptionBytes int
	MaxSchemaBytes      int
	// MaxResultBytes caps the answer to one tools/call where toolgate
	// reads it (stdio framing, the Streamable HTTP body): a larger answer
	// is refused before it is decoded and the call fails with a
	// *ResultTooLargeError text; the session stays up. 0: no cap beyond
	// the transport's own (16 MiB on stdio).
	MaxResultBytes int
	// Secrets, when set, also receives every secret this client learns
	// (see [Secrets]): one set shared by a host's clients redacts records
	// about any server.
	Secrets *Secrets
}

// Client is the host's client for one server. Build it with New, then call
// Connect once.
type Client struct {
	name   string
	opts   Options
	log    hclog.Logger
	router readRouter
	pause  pauseGroup
	// strays counts stray responses a stdio server sent (answers with
	// no usable id), ignored rather than ending the connection.
	strays atomic.Int64
	// secrets are the values this server was given; see Redact.
	secrets Secrets
	// warns rate-limits every warning a server's message can cause, so a
	// flood of them costs a few log lines and a count.
	warns *warnlimit.Limiter

	// recovering is a one-permit semaphore: concurrent callers that hit
	// an expired session share one re-initialization.
	recovering chan struct{}

	mu      sync.Mutex
	state   State
	err     error // why the session ended; set once when closed
	session *mcp.ClientSession
	version string             // the handshake version that worked
	expired *mcp.ClientSession // HTTP: the session the server forgot, until recovered
	proc    launch.Process     // stdio only
	stderr  *tailBuffer        // stdio only
	pumped  chan struct{}      // stdio only: closed when the stderr pump has read everything
	closing bool               // Close was called: an end is not a crash
	done    chan struct{}      // closed when state becomes StateClosed
	wg      sync.WaitGroup     // stderr pump, session watchers, old-session closers
}

// New returns an unconnected client.
func New(opts Options) (*Client, error) {
	if (opts.Stdio == nil) == (opts.HTTP == nil) {
		return nil, errors.New("creating MCP client: exactly one of Stdio and HTTP must be set")
	}
	switch opts.ProtocolVersion {
	case "":
		opts.ProtocolVersion = Auto
	case Auto:
	default:
		if !supportedVersion(opts.ProtocolVersion) {
			return nil, fmt.Errorf("creating MCP client for %q: unsupported protocol_version %q (supported: %v)",
				opts.Name, opts.ProtocolVersion, mcp.SupportedProtocolVersions())
		}
	}
	if opts.ClientInfo == nil {
		opts.ClientInfo = &mcp.Implementation{Name: "toolgate", Title: "toolgate", Version: version.Toolgate}
	}
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	c := &Client{
		name:       opts.Name,
		opts:       opts,
		log:        log,
		warns:      warnlimit.New(warnlimit.Options{}),
		done:       make(chan struct{}),
		recovering: make(chan struct{}, 1),
	}
	c.router.log = c.serverLog
	c.secrets.also = opts.Secrets
	if opts.Stdio != nil {
		c.secrets.Add(envSecrets(opts.Stdio.Spec.Env)...)
	} else {
		c.secrets.Add(requestSecrets(opts.HTTP.Header)...)
	}
	return c, nil
}

// serverLog receives the server's notifications/message, on the read
// path (see readRouter).
func (c *Client) serverLog(p *mcp.LoggingMessageParams) {
	if f := c.opts.Handlers.Log; f != nil {
		f(context.Background(), p)
		return
	}
	data, err := json.Marshal(p.Data)
	if err != nil {
		data = []byte(fmt.Sprint(p.Data))
	}
	c.log.Named("server").Info("log message", "level", p.Level, "logger", safetext.Line(p.Logger),
		"data", string(safetext.JSON([]byte(c.secrets.RedactRecord(string(data))))))
}

func supportedVersion(v string) bool {
	for _, s := range mcp.SupportedProtocolVersions() {
		if s == v {
			return true
		}
	}
	return false
}

// Redact replaces in text every secret this server was given: the
// values of its credential-named environment variables, of its
// credential headers, and every Authorization credential sent to it,
// OAuth access tokens included. Errors this client returns are already
// redacted; callers redact what the server answered (tool results) and
// anything else they show or record.
func (c *Client) Redact(text string) string { return c.secrets.Redact(text) }

// Name is the server's config name.
func (c *Client) Name() string { return c.name }

// State returns the current state.
func (c *Client) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// Done is closed when the session has ended, for whatever reason.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns why the session ended: nil while it runs or after a Close,
// an error describing the crash or exit otherwise.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// InitializeResult returns the server's handshake answer (nil before ready).
func (c *Client) InitializeResult() *mcp.InitializeResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session == nil {
		return nil
	}
	return c.session.InitializeResult()
}

// Pid returns the stdio server's process id, or 0.
func (c *Client) Pid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil {
		return 0
	}
	return c.proc.Pid()
}

// Connect starts the server (stdio) or opens the session (HTTP) and runs
// the handshake. ctx bounds only the connection; the session lives until
// Close. Connect may be called once.
func (c *Client) Connect(ctx context.Context) error {
	c.mu.Lock()
	if c.state != StateNew {
		c.mu.Unlock()
		return fmt.Errorf("connecting MCP client for %q: already %s", c.name, c.state)
	}
	c.state = StateConnecting
	c.mu.Unlock()

	version := c.opts.ProtocolVersion
	if version == Auto {
		version = LegacyVersion
	}
	err := c.connect(ctx, version)
	if err != nil && c.opts.ProtocolVersion == Auto && legacyRejected(err) && ctx.Err() == nil {
		c.log.Debug("server rejected the legacy handshake; retrying with server/discover", "error", err)
		version = ModernVersion
		err = c.connect(ctx, version)
	}
	if err != nil {
		c.finish(err)
		return err
	}

	c.mu.Lock()
	if c.closing {
		// Close raced with Connect: honour it.
		c.mu.Unlock()
		_ = c.Close()
		return fmt.Errorf("connecting MCP client for %q: %w", c.name, ErrClosed)
	}
	c.state = StateReady
	c.version = version
	s := c.session
	c.mu.Unlock()

	c.wg.Add(1)
	go c.watch(s)
	c.enableLogging(ctx, s)
	return nil
}

// enableLogging asks a server that offers logging to send its messages:
// servers send notifications/message only after logging/setLevel, and
// the host forwards them (log, or upstream in gateway mode). Best effort:
// a server that refuses still works.
func (c *Client) enableLogging(ctx context.Context, s *mcp.ClientSession) {
	init := s.InitializeResult()
	if init == nil || init.Capabilities == nil || init.Capabilities.Logging == nil || init.ProtocolVersion >= ModernVersion {
		return
	}
	if err := s.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		c.log.Debug("the server refused logging/setLevel", "error", err)
	}
}

// connect makes one attempt at version. On failure it leaves nothing
// running.
func (c *Client) connect(ctx context.Context, version string) error {
	client := mcp.NewClient(c.opts.ClientInfo, c.clientOptions())
	client.AddReceivingMiddleware(c.serverRequests)

	var transport mcp.Transport
	if c.opts.Stdio != nil {
		proc, err := c.opts.Stdio.Launcher.Launch(ctx, c.opts.Stdio.Spec)
		if err != nil {
			return fmt.Errorf("starting server process: %w", err)
		}
		tail := newTailBuffer(stderrTailLines, stderrTailBytes)
		pumped := make(chan struct{})
		c.mu.Lock()
		c.proc, c.stderr, c.pumped = proc, tail, pumped
		c.mu.Unlock()
		secrets := envSecrets(c.opts.Stdio.Spec.Env)
		// Taken here, not in the goroutine: a process closed before the
		// pump first ran would otherwise see no reader and drop what the
		// server wrote (a server that fails at once loses its last words).
		stderr := proc.Stderr()
		c.wg.Add(2)
		go func() {
			defer c.wg.Done()
			defer close(pumped)
			pumpStderr(stderr, tail, c.log.Named("stderr"), secrets)
		}()
		readEnded := make(chan struct{})
		go func() {
			defer c.wg.Done()
			c.endWithProcess(proc, readEnded)
		}()
		transport = &stdioTransport{rwc: proc, router: &c.router, secrets: secrets, strays: &c.strays, log: c.log, warns: c.warns, readEnded: readEnded, maxResult: c.opts.MaxResultBytes}
	} else {
		transport, _ = c.httpTransport()
	}

	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return c.connectError(ctx, err)
	}
	c.mu.Lock()
	c.session = cs
	c.mu.Unlock()
	return nil
}

// connectError explains a failed handshake. For stdio it waits for the
// process to be gone and adds its exit status and stderr tail: "connection
// closed: EOF" alone tells a user nothing.
func (c *Client) connectError(ctx context.Context, err error) error {
	c.mu.Lock()
	proc, tail := c.proc, c.stderr
	c.proc, c.stderr = nil, nil
	c.mu.Unlock()
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	if proc == nil {
		var ae *AuthError
		if errors.As(err, &ae) {
			return ae // the manager words it as a login hint
		}
		return fmt.Errorf("initializing: %w", specificError(err))
	}
	// go-sdk closed the transport, which ran the shutdown sequence; the
	// process is gone once Close returns.
	_ = proc.Close()
	exit := proc.Wait(context.WithoutCancel(ctx))
	c.wg.Wait() // the stderr pump has drained everything it will get
	var exitText string
	switch {
	case ctx.Err() != nil:
		// We killed it; its exit status is ours, not its own.
	case exit != nil:
		exitText = "; server process exited: " + exit.Error()
	default:
		exitText = "; server process exited with status 0"
	}
	return &StartError{Err: fmt.Errorf("initializing: %w%s", err, exitText),
		Stderr: stderrReport(tail, envSecrets(c.opts.Stdio.Spec.Env))}
}

func (c *Client) clientOptions() *mcp.ClientOptions {
	o := &mcp.ClientOptions{
		Logger: slogbridge.New(c.log.Named("sdk")),
		// No roots: the host has none. Sampling only with a handler
		// (serve's forward_sampling). Elicitation is always advertised;
		// with no handler it is declined.
		Capabilities: &mcp.ClientCapabilities{
			Elicitation: &mcp.ElicitationCapabilities{
				Form: &mcp.FormElicitationCapabilities{},
				URL:  &mcp.URLElicitationCapabilities{},
			},
		},
		ElicitationHandler: c.elicit,
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			if f := c.opts.Handlers.ToolsChanged; f != nil {
				f()
			}
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			if f := c.opts.Handlers.ResourcesChanged; f != nil {
				f()
			}
		},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
			if f := c.opts.Handlers.PromptsChanged; f != nil {
				f()
			}
		},
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			if f := c.opts.Handlers.ResourceUpdated; f != nil && req.Params != nil && req.Params.URI != "" {
				f(req.Params.URI)
			}
		},
		// No LoggingMessageHandler: log messages are delivered where they
		// are read, in order with results (readRouter).
	}
	if c.opts.Handlers.Sample != nil {
		// Plain sampling: whether the upstream client takes tools or
		// context in a sampling request is not known per connection.
		o.Capabilities.Sampling = &mcp.SamplingCapabilities{}
		o.CreateMessageWithToolsHandler = c.sample
	}
	return o
}

// serverRequests is receiving middleware for the requests a server
// sends the client.
//
// elicitation/create goes to the handler as sent: go-sdk's own check of
// the requested schema is stricter than the specification (it refuses a
// titled multi-select, "items": {"type": "string", "anyOf": [...]}, of
// SEP-1330), and toolgate passes a form on rather than judging it. The
// terminal reports a form it cannot show; the server that asked
// validates the answer.
//
// sampling/createMessage without a Sample handler is answered with an
// error that names the setting, instead of go-sdk's bare "not supported".
func (c *Client) serverRequests(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "elicitation/create":
			if r, ok := req.(*mcp.ElicitRequest); ok && r.Params != nil {
				return c.elicit(ctx, r)
			}
		case "sampling/createMessage":
			if c.opts.Handlers.Sample == nil {
				c.warns.Warn(c.log, "refused the server's sampling/createMessage: toolgate does not offer it sampling (forward_sampling)")
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: NoSamplingMessage}
			}
		}
		return next(ctx, method, req)
	}
}

// NoSamplingMessage answers a server's sampling/createMessage when
// toolgate does not forward sampling to it.
const NoSamplingMessage = "toolgate does not forward sampling/createMessage to this server: " +
	"only toolgate serve can, to the MCP client whose tool call is running, " +
	"and only with forward_sampling = true in the serve block (or in this server's block)"

// sample runs the host's sampling handler with this client's call
// timeouts paused: the user reviews the prompt in their client.
func (c *Client) sample(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
	c.pause.begin()
	defer c.pause.end()
	return c.opts.Handlers.Sample(ctx, req)
}

// elicit runs the host's elicitation handler with this client's call
// timeouts paused: a human answering a form is not the server being slow.
func (c *Client) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	c.pause.begin()
	defer c.pause.end()
	if c.opts.Handlers.Elicit == nil {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	return c.opts.Handlers.Elicit(ctx, req)
}

// watch waits for the session to end and records why.
func (c *Client) watch(s *mcp.ClientSession) {
	defer c.wg.Done()
	werr := s.Wait()

	c.mu.Lock()
	closing, proc, current := c.closing, c.proc, c.session == s
	tail, pumped := c.stderr, c.pumped
	if current && !closing && c.opts.HTTP != nil && expiredError(werr) {
		// The server forgot the session (a 404 on its event stream). The
		// next request re-initializes; until then the client stays ready.
		c.expired = s
		c.mu.Unlock()
		c.log.Debug("session expired; re-initializing on the next request")
		return
	}
	c.mu.Unlock()
	if !current {
		return // replaced by a recovered session
	}
	if closing {
		c.finish(nil)
		return
	}
	// The server ended the session on its own: a crash, or an exit.
	var reason error
	var stderr string
	if proc != nil {
		_ = proc.Close()
		if exit := proc.Wait(context.Background()); exit != nil {
			reason = fmt.Errorf("server process exited: %w", exit)
		} else {
			reason = errors.New("server process exited with status 0")
		}
		stderr = c.stderrTail(tail, pumped)
	} else {
		reason = fmt.Errorf("session ended: %w", werr)
		if werr == nil {
			reason = errors.New("session ended by the server")
		}
	}
	c.finish(&ExitError{Server: c.name, Err: reason, Stderr: stderr})
	_ = s.Close()
}

// exitDrainWait is how long the connection may go on reading after the
// server process exited: long enough to read what it wrote before it
// died (its last answers), short enough that a child it left behind
// holding the stdout pipe cannot keep the session open.
const exitDrainWait = 250 * time.Millisecond

// endWithProcess ends the connection when the server process exits, not
// only when its stdout reaches EOF: a child that inherited the pipe would
// otherwise keep a dead server "connected", and calls would hang. It
// returns once the process has exited and reading its stdout has ended.
func (c *Client) endWithProcess(proc launch.Process, readEnded <-chan struct{}) {
	_ = proc.Wait(context.Background()) // every path ends the process: Close, connect errors, a crash
	t := time.NewTimer(exitDrainWait)
	defer t.Stop()
	select {
	case <-readEnded:
		return // EOF came, or the connection was closed
	case <-t.C:
	}
	c.log.Warn("server process exited but its stdout is still open (a child process it left behind?); ending the session")
	_ = proc.Close() // closes our end of stdout: the pending read returns
}

// stderrDrainWait bounds how long a crash report waits for the last
// stderr lines after the process exited: a child the server left behind
// may hold the pipe open for ever.
const stderrDrainWait = 500 * time.Millisecond

// stderrTail returns the redacted last lines of an exited server's
// stderr, once the pump has read them (or stderrDrainWait has passed).
func (c *Client) stderrTail(tail *tailBuffer, pumped <-chan struct{}) string {
	if pumped != nil {
		t := time.NewTimer(stderrDrainWait)
		select {
		case <-pumped:
		case <-t.C:
		}
		t.Stop()
	}
	return stderrReport(tail, envSecrets(c.opts.Stdio.Spec.Env))
}

// finish moves to StateClosed once.
func (c *Client) finish(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == StateClosed {
		return
	}
	c.state = StateClosed
	if !c.closing {
		c.err = err
	}
	close(c.done)
}

// Close ends the session and, for stdio, the process (close stdin, then
// signals). It waits for every goroutine of the client. Idempotent.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closing = true
	s, proc := c.session, c.proc
	connecting := c.state == StateConnecting
	c.mu.Unlock()
	if connecting {
		// Connect notices closing when it returns; nothing to stop here
		// beyond what its ctx bounds.
		return nil
	}
	var err error
	if s != nil {
		err = s.Close()
	}
	if proc != nil {
		_ = proc.Close()
	}
	c.finish(nil)
	c.wg.Wait()
	c.pause.close()
	c.warns.Close()
	if err != nil && !errors.Is(err, mcp.ErrConnectionClosed) {
		return fmt.Errorf("closing MCP client for %q: %w", c.name, err)
	}
	return nil
}

// sessionOrErr returns the live session, or why there is none.
func (c *Client) sessionOrErr() (*mcp.ClientSession, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.state {
	case StateReady:
		return c.session, nil
	case StateClosed:
		if c.err != nil {
			return nil, c.err
		}
		return nil, ErrClosed
	}
	return nil, ErrNotReady
}

// legacyRejected reports whether err is a server refusing the legacy
// handshake itself (as opposed to failing for another reason).
func legacyRejected(err error) bool {
	var werr *jsonrpcError
	if !errors.As(err, &werr) {
		return false
	}
	return werr.Code == codeMethodNotFound || werr.Code == mcp.CodeUnsupportedProtocolVersion
}
