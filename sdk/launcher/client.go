package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/internal/pb/launcherv1"
	"github.com/toolgate/toolgate/sdk/internal/wire"
)

// Defaults of [ClientOptions].
const (
	DefaultStdinGrace = 2 * time.Second
	DefaultTermGrace  = 2 * time.Second
	DefaultKillGrace  = 2 * time.Second
)

// ClientOptions configures a [Client] and the processes it launches.
type ClientOptions struct {
	// StdinGrace is how long the process gets to exit after its stdin is
	// closed, when [RemoteProcess.Close] stops it, before SIGTERM; the
	// plugin keeps the time (see [Stopper]). Zero means
	// [DefaultStdinGrace].
	StdinGrace time.Duration
	// TermGrace is how long it gets after SIGTERM before SIGKILL. Zero
	// means [DefaultTermGrace].
	TermGrace time.Duration
	// KillGrace is how long Close waits for the plugin to report the exit
	// beyond the two graces, and Kill after SIGKILL, before they abandon
	// the stream (which makes the plugin kill the process too). Zero
	// means [DefaultKillGrace].
	KillGrace time.Duration
	// Logger receives diagnostics about processes (never their I/O, args or
	// environment). Nil discards them.
	Logger hclog.Logger
	// StreamOnly keeps every process's I/O on the launch stream: the
	// client never asks the plugin for the process's pipes. By default it
	// asks where it can take them (Linux), and the plugin decides per
	// process (see [ModePassedFDs]).
	StreamOnly bool
}

func (o ClientOptions) withDefaults() ClientOptions {
	if o.StdinGrace <= 0 {
		o.StdinGrace = DefaultStdinGrace
	}
	if o.TermGrace <= 0 {
		o.TermGrace = DefaultTermGrace
	}
	if o.KillGrace <= 0 {
		o.KillGrace = DefaultKillGrace
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	return o
}

// Client is the host's handle on a launcher plugin. It implements
// [Launcher]; [Client.Launch] returns the richer [*RemoteProcess].
//
// A Client is safe for concurrent use; each process has its own stream.
type Client struct {
	rpc    launcherv1.LauncherServiceClient
	plugin wire.PluginClient
	exited context.Context
	opts   ClientOptions
	faults fdFaults // tests only
}

// NewClient returns a client of the launcher served on conn. exited must be
// cancelled when the plugin process exits (go-plugin's GRPCClient
// context); nil means there is no process to watch.
func NewClient(conn grpc.ClientConnInterface, exited context.Context, opts ClientOptions) *Client {
	if exited == nil {
		exited = context.Background()
	}
	return &Client{
		rpc:    launcherv1.NewLauncherServiceClient(conn),
		plugin: wire.NewPluginClient(conn, exited, sdk.KindLauncher),
		exited: exited,
		opts:   opts.withDefaults(),
	}
}

// Exited is closed when the plugin process has exited.
func (c *Client) Exited() <-chan struct{} { return c.exited.Done() }

// Info describes the plugin.
func (c *Client) Info(ctx context.Context) (sdk.Info, error) { return c.plugin.Info(ctx) }

// Configure sends the plugin its configuration and returns its
// diagnostics (not an error: check them with sdk.HasErrors).
func (c *Client) Configure(ctx context.Context, config json.RawMessage) ([]sdk.Diagnostic, error) {
	return c.plugin.Configure(ctx, config)
}

// Start implements [Launcher] with [Client.Launch].
func (c *Client) Start(ctx context.Context, spec Spec) (Process, error) {
	p, err := c.Launch(ctx, spec)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Launch asks the plugin to start spec's process and returns it once the
// plugin says it runs. ctx bounds only the start: the process lives until
// Close or Kill, or until the plugin dies.
//
// A process that could not be started is a [*StartError] (matching
// [ErrStart]); other errors match the sdk sentinels as for any call.
func (c *Client) Launch(ctx context.Context, spec Spec) (*RemoteProcess, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("launching %q: %w", spec.Server, err)
	}
	// The stream outlives ctx: it is the process's lifetime.
	streamCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	fail := func(err error) (*RemoteProcess, error) {
		cancel()
		return nil, fmt.Errorf("launching %q: %w", spec.Server, err)
	}
	stream, err := c.rpc.Launch(streamCtx)
	if err != nil {
		return fail(wire.FromRPC(ctx, err, c.exited))
	}
	// ctx bounds the start: if it ends first, abandon the stream (the
	// plugin then kills whatever it started).
	stopStartBound := context.AfterFunc(ctx, cancel)
	acceptFDs := fdPassingSupported && !c.opts.StreamOnly
	err = stream.Send(&launcherv1.LaunchClientFrame{Frame: &launcherv1.LaunchClientFrame_Start{Start: &launcherv1.StartSpec{
		Server:    spec.Server,
		Command:   spec.Command,
		Args:      spec.Args,
		Env:       spec.Env,
		Dir:       spec.Dir,
		RemoteEnv: spec.RemoteEnv,
		AcceptFds: acceptFDs,
	}}})
	var first *launcherv1.LaunchServerFrame
	if err == nil {
		first, err = stream.Recv()
	} else if errors.Is(err, io.EOF) {
		_, err = stream.Recv() // the stream's real status
	}
	var files *stdioFiles
	var settleErr error
	if offer := first.GetStarted().GetFdOffer(); err == nil && offer != nil {
		files, settleErr = c.settleOffer(ctx, stream, spec.Server, offer, acceptFDs)
	}
	if !stopStartBound() {
		files.close()
		return fail(ctx.Err())
	}
	if settleErr != nil {
		return fail(settleErr)
	}
	if errors.Is(err, io.EOF) {
		return fail(wire.BadResponse("the launch stream ended before the process started"))
	}
	if err != nil {
		return fail(wire.FromRPC(ctx, err, c.exited))
	}
	switch f := first.GetFrame().(type) {
	case *launcherv1.LaunchServerFrame_Started:
		return newRemoteProcess(spec.Server, int(f.Started.GetPid()), stream, cancel, c.exited, c.opts, files), nil
	case *launcherv1.LaunchServerFrame_Error:
		cancel()
		return nil, &StartError{
			Kind:          errorKindFromPB(f.Error.GetKind()),
			Message:       f.Error.GetMessage(),
			StderrExcerpt: truncate(f.Error.GetStderrExcerpt(), MaxStderrExcerpt),
		}
	default:
		return fail(wire.BadResponse("the launch stream began with %T, not started or error", f))
	}
}

// settleOffer fetches the process's pipes a plugin offered, if the host
// asked for them, and tells the plugin whether it took them. Whatever goes
// wrong with the pipes, the process stays usable over the stream; only a
// broken stream is an error.
func (c *Client) settleOffer(ctx context.Context, stream launcherv1.LauncherService_LaunchClient,
	server string, offer *launcherv1.FdOffer, asked bool,
) (*stdioFiles, error) {
	var files *stdioFiles
	fetchErr := errors.New("the host did not ask for descriptors")
	if asked {
		files, fetchErr = fetchFDs(ctx, offer, c.faults)
	}
	handoff := &launcherv1.FdHandoff{Taken: fetchErr == nil}
	if fetchErr != nil {
		handoff.Reason = fetchErr.Error()
		c.opts.Logger.Debug("launcher offered the process's pipes but the host could not take them; using the stream",
			"server", server, "error", fetchErr)
	}
	err := stream.Send(&launcherv1.LaunchClientFrame{Frame: &launcherv1.LaunchClientFrame_FdHandoff{FdHandoff: handoff}})
	if err != nil {
		files.close()
		if errors.Is(err, io.EOF) {
			_, err = stream.Recv() // the stream's real status
			if errors.Is(err, io.EOF) {
				return nil, wire.BadResponse("the launch stream ended during the descriptor hand-off")
			}
		}
		return nil, wire.FromRPC(ctx, err, c.exited)
	}
	return files, nil
}

func errorKindFromPB(k launcherv1.StartErrorKind) ErrorKind {
	switch k {
	case launcherv1.StartErrorKind_START_ERROR_KIND_NOT_FOUND:
		return KindNotFound
	case launcherv1.StartErrorKind_START_ERROR_KIND_PERMISSION:
		return KindPermission
	case launcherv1.StartErrorKind_START_ERROR_KIND_EXECUTOR:
		return KindExecutor
	}
	return KindOther // the protocol reads UNSPECIFIED and unknown kinds as OTHER
}
