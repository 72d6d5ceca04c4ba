package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/host"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/gateway"
	"github.com/toolgate/toolgate/host/inbox"
	"github.com/toolgate/toolgate/host/reload"
	"github.com/toolgate/toolgate/host/tokenauth"
)

// listenFromConfig is the --http value that means "serve { listen }".
const listenFromConfig = "config"

// serveGCPercent is the collector's pace while serving (see tuneGC).
const serveGCPercent = 400

// tuneGC makes the collector run less often unless the user set GOGC.
// go-sdk allocates a fresh 32 KiB decode buffer for every JSON message it
// reads — several per call on each side of the gateway — while the live
// heap stays a few MiB, so at the default pace the collector runs every
// few calls and costs the gateway about as much CPU as the calls
// themselves (measured with BenchmarkCallLatency in host/gateway).
func (g *globals) tuneGC() {
	if _, set := g.io.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(serveGCPercent)
	}
}

func newServeCmd(g *globals) *cobra.Command {
	var (
		stdio    bool
		httpAddr string
		watch    bool
		metrics  string
	)
	cmd := &cobra.Command{
		Use:   "serve [--stdio | --http ADDR]",
		Short: "Serve the governed tools to an MCP client, over stdio or Streamable HTTP",
		Long: `Serve every configured server's tools to one upstream MCP client (an IDE,
a desktop assistant, another agent) through one endpoint. Every call goes
through the approval chain; when it needs a human, toolgate asks the client
with an elicitation form. Clients that cannot show forms get a denial that says
how to configure a permission hook or the Guardian instead.

--stdio (the default) speaks MCP on stdin/stdout, for clients that start
toolgate themselves; diagnostics go to stderr. --http ADDR serves Streamable
HTTP at http://ADDR/mcp (--http config uses the serve { listen } address).
A loopback listener answers this machine only, but every local user can
reach it; serve { token_env_var } names a variable holding a bearer token,
which is then required on every request (and is required to listen beyond
loopback). --http unix:/path serves on a unix socket created with mode 0600,
reachable by your own processes only (not on Windows).

Servers start in the background: clients are served at once with the servers
that are ready, and told (notifications/tools/list_changed) as each further
one's tools arrive. A session's first tools/list (resources/list, prompts/list)
waits until every server is ready or failed, for at most serve {
initial_list_wait } (default 8s, below Codex's 10 s startup limit; 0 answers at
once), so that a client that lists once (a script, Codex, inspector --cli) sees
every server that starts in time. A server that fails to start is retried with backoff
(retry_startup); a required one that fails stops toolgate with exit code 1.

SIGHUP (and, with --watch, any change of the configuration file) reloads the
configuration: servers whose connection settings did not change keep running,
changed ones restart, removed ones stop, added ones start. An invalid new
configuration is refused with its diagnostics and the running one stays.

--metrics ADDR (or serve { metrics { listen } }) serves Prometheus metrics at
/metrics and the probes /healthz and /readyz on a listener of their own.

Ctrl-C or SIGTERM drains: new sessions are refused (HTTP 503) and /readyz fails,
calls in flight get serve { drain_grace } (default 20s) to finish; a call still
running then is cancelled on its server and answered with a "shutting down,
may or may not have run" tool error, then the sessions end and toolgate stops
every server it started.`,
		Example: `  toolgate serve --config toolgate.hcl
  toolgate serve --http 127.0.0.1:8931 --config config.hcl.example
  toolgate serve --http unix:$XDG_RUNTIME_DIR/toolgate.sock --config toolgate.hcl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if stdio && httpAddr != "" {
				return exit(ExitUsage, errors.New("choose one of --stdio and --http"))
			}
			return g.serve(cmd, httpAddr, metrics, watch)
		},
	}
	cmd.Flags().BoolVar(&stdio, "stdio", false, "serve MCP on stdin/stdout (the default)")
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve Streamable HTTP at http://ADDR/mcp; \"config\" means serve { listen }; unix:/path serves on a private unix socket")
	cmd.Flags().StringVar(&metrics, "metrics", "", "serve /metrics, /healthz and /readyz at http://ADDR (overrides serve { metrics { listen } })")
	cmd.Flags().BoolVar(&watch, "watch", false, "reload the configuration when its file changes (SIGHUP always reloads)")
	return cmd
}

// serve runs toolgate serve: the host and its servers, the gateway in
// front of them, configuration reloads, and the upstream transport
// (stdio, or Streamable HTTP at httpAddr) until the client or a signal
// ends it.
func (g *globals) serve(cmd *cobra.Command, httpAddr, metricsAddr string, watch bool) error {
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	var endpoint *gateway.Endpoint
	if httpAddr != "" {
		addr := httpAddr
		if addr == listenFromConfig {
			addr = ""
		}
		endpoint, err = gateway.NewEndpoint(cfg.Serve, addr, g.io.LookupEnv)
		if err != nil {
			return exit(ExitUsage, err)
		}
	}
	g.tuneGC()
	ctx := cmd.Context()
	log := g.logger()
	held := inbox.New(inbox.Options{Logger: log})
	defer held.Close()
	// The ops listener starts before the host (its metrics are a sink of
	// the host's events), so before the gateway, which needs the host:
	// until the gateway exists /readyz says "starting".
	var served atomic.Pointer[gateway.Gateway]
	ops, err := g.startOps(ctx, cfg.Serve.Ops, metricsAddr, probes{&served})
	if err != nil {
		return err
	}
	// Stopped last: /readyz answers "draining" until the servers stopped.
	defer ops.stop()
	// The host starts its servers in the background: clients are served
	// at once with the servers that are ready, and told (tools/
	// list_changed) as each further one arrives, so a slow server holds
	// no client hostage.
	h, err := g.launchHost(ctx, cfg, true, host.Options{
		Serving: true,
		Sinks:   append(ops.sinks, held),
	})
	if err != nil {
		return err
	}
	// Deferred in this order, the gateway ends its sessions and calls
	// before the host stops the servers and plugins.
	defer h.Close()
	held.Attach(func() *config.Inbox { return h.Config().Approval.Inbox }, h.Bus)
	gw, err := gateway.New(h, gateway.Options{Logger: log, DrainGrace: cfg.Serve.Ops.DrainGrace, Inbox: held})
	if err != nil {
		return attachError(err)
	}
	defer gw.Close()
	served.Store(gw)
	// Reloads run until serving ends, and end before the gateway and host
	// close (defers run last-in, first-out).
	defer g.runReloads(ctx, h, watch, log)()

	serveCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		if err := g.watchStartup(serveCtx, h, gw); err != nil {
			stop(err)
		}
	}()
	defer func() { stop(nil); <-watched }()

	ready := 0
	for _, st := range h.Manager.Status() {
		if st.Status == events.StatusReady {
			ready++
		}
	}
	summary := fmt.Sprintf("toolgate: serving %d tools from %d MCP server(s)", len(gw.Tools()), ready)
	if n := len(enabled(cfg)); ready < n {
		summary += fmt.Sprintf(" (%d more starting: their tools are added as they become ready)", n-ready)
	}
	if endpoint == nil {
		fmt.Fprintln(g.io.Err, summary+" over stdio; stop with Ctrl-C or by closing stdin")
		err = g.serveStdio(serveCtx, gw)
	} else {
		err = g.serveHTTP(serveCtx, gw, held, endpoint, summary)
	}
	if cause := context.Cause(serveCtx); cause != nil && !errors.Is(cause, context.Canceled) && ctx.Err() == nil {
		return cause // a required server failed, or two tools got one name
	}
	return err
}

// watchStartup waits for the first startup attempt of every server and
// returns the error that must stop toolgate serve: a required server
// that failed (exit 1, as before serving at once), or a configuration
// that gives two tools one upstream name (exit 2). It returns nil when
// startup went well or ctx ended first.
func (g *globals) watchStartup(ctx context.Context, h *host.Host, gw *gateway.Gateway) error {
	if _, err := h.Manager.WaitStartup(ctx); err != nil {
		return nil
	}
	if err := h.Manager.RequiredError(); err != nil {
		return exit(ExitFailure, err)
	}
	if err := gw.NameError(); err != nil {
		return attachError(err)
	}
	return nil
}

// probes are the ops listener's view of the gateway, which does not exist
// yet when the listener starts.
type probes struct {
	gw *atomic.Pointer[gateway.Gateway]
}

func (p probes) Sessions() int {
	if gw := p.gw.Load(); gw != nil {
		return gw.Sessions()
	}
	return 0
}

func (p probes) Ready() error {
	if gw := p.gw.Load(); gw != nil {
		return gw.Ready()
	}
	return fmt.Errorf("%w: starting", gateway.ErrNotReady)
}

// attachError maps a gateway naming error to its exit code.
func attachError(err error) error {
	if errors.Is(err, gateway.ErrToolName) {
		return exit(ExitUsage, err)
	}
	return exit(ExitFailure, err)
}

// runReloads reloads h's configuration on SIGHUP (and file changes with
// watch) in the background. The function it returns stops the reloads
// and waits for them.
func (g *globals) runReloads(ctx context.Context, h *host.Host, watch bool, log hclog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- reload.Run(ctx, reload.Options{Path: g.loadedPath, Watch: watch, Signal: true, Logger: log.Named("reload")},
			g.reloader(h, g.loadedPath))
	}()
	return func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintln(g.io.Err, "toolgate: watching the configuration failed:", err)
		}
	}
}

// serveHTTP listens at endpoint, tells the user where to connect, and
// serves Streamable HTTP until ctx ends.
func (g *globals) serveHTTP(ctx context.Context, gw *gateway.Gateway, held *inbox.Inbox, endpoint *gateway.Endpoint, summary string) error {
	ln, err := gateway.Listen(endpoint)
	if err != nil {
		return exit(ExitFailure, fmt.Errorf("listen on %s: %w (is another toolgate serve running? pick another port with --http)", endpoint.Addr, err))
	}
	url := gateway.URL(endpoint, ln.Addr())
	if endpoint.Network == "unix" {
		fmt.Fprintf(g.io.Err, "%s at %s on the unix socket %s (Streamable HTTP; mode 0600: only you can connect)\n", summary, url, endpoint.Addr)
	} else {
		fmt.Fprintf(g.io.Err, "%s at %s (Streamable HTTP)\n", summary, url)
	}
	held.SetBaseURL(strings.TrimSuffix(url, gateway.Path))
	if held.Enabled() {
		fmt.Fprintf(g.io.Err, "  approvals: %s (calls that need a human are held there)\n", held.URL())
	}
	g.printTryIt(endpoint, url)
	fmt.Fprintln(g.io.Err, "  stop with Ctrl-C")
	if err := gw.ServeHTTP(ctx, ln, endpoint); err != nil {
		return exit(ExitFailure, err)
	}
	fmt.Fprintln(g.io.Err, "toolgate: stopped")
	return nil
}

// printTryIt prints a one-liner that lists the tools at url: curl with
// the bearer token when one is required, the MCP Inspector otherwise.
func (g *globals) printTryIt(endpoint *gateway.Endpoint, url string) {
	if endpoint.Network == "unix" {
		auth := ""
		if endpoint.RequiresToken() {
			auth = fmt.Sprintf(" -H \"Authorization: Bearer $%s\"", endpoint.TokenEnvVar)
		}
		fmt.Fprintf(g.io.Err, "  try it: curl -s --unix-socket %s %s%s -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "+
			"-d '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"curl\",\"version\":\"1\"}}}'\n",
			endpoint.Addr, url, auth)
		return
	}
	if !endpoint.RequiresToken() {
		fmt.Fprintf(g.io.Err, "  try it: npx -y @modelcontextprotocol/inspector --cli %s --method tools/list\n", url)
		return
	}
	if endpoint.Auth != nil {
		fmt.Fprintf(g.io.Err, "  every request needs an OAuth access token from %s for %s; clients find it via %s\n",
			endpoint.Auth.Issuer, endpoint.Auth.Resource, tokenauth.MetadataURL(endpoint.Auth.Resource))
		return
	}
	fmt.Fprintf(g.io.Err, "  every request needs: Authorization: Bearer $%s\n", endpoint.TokenEnvVar)
	fmt.Fprintf(g.io.Err, "  try it: curl -s %s -H \"Authorization: Bearer $%s\" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "+
		"-d '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"curl\",\"version\":\"1\"}}}'\n",
		url, endpoint.TokenEnvVar)
}

// serveStdio speaks MCP on the command's stdin and stdout.
func (g *globals) serveStdio(ctx context.Context, gw *gateway.Gateway) error {
	in, ok := g.io.In.(io.ReadCloser)
	if !ok {
		in = io.NopCloser(g.io.In)
	}
	out, ok := g.io.Out.(io.WriteCloser)
	if !ok {
		out = nopWriteCloser{g.io.Out}
	}
	if err := gw.ServeStdio(ctx, &mcp.IOTransport{Reader: in, Writer: out, MaxLineLength: gateway.MaxMessageBytes}); err != nil {
		return exit(ExitFailure, err)
	}
	return nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
