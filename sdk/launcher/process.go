package launcher

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/sdk/internal/pb/launcherv1"
	"github.com/toolgate/toolgate/sdk/internal/wire"
)

// errAbandoned ends a stream that the host cancelled itself.
var errAbandoned = errors.New("launch stream abandoned by the host")

// RemoteProcess is a process a launcher plugin runs for the host, seen
// through its launch stream. Read returns its stdout and Write feeds its
// stdin, so it can carry an MCP stdio session; it also implements
// [Process].
//
// Its I/O travels in frames on the stream ([ModeStream]) or, when host and
// plugin negotiated it, over the process's own pipes, which the plugin
// passed to the host ([ModePassedFDs]): see [RemoteProcess.Mode]. The
// behaviour below is the same in both modes; signals, the exit status and
// the plugin's death always travel on the stream.
//
// Close asks the plugin to stop the process, which runs the stop sequence
// itself with the host's waits (close stdin; after StdinGrace, SIGTERM;
// after TermGrace, SIGKILL: internal/contain's sequence), and returns once
// the process has exited or been given up on: KillGrace after the two
// graces, Close abandons the stream, which makes the plugin kill the
// process. It is idempotent. Once Close has begun, output that no Read is
// already waiting for is discarded, so that shutdown never waits on a
// reader; Write fails.
//
// Once Stderr has been called, stderr must be drained like stdout: output
// nobody reads holds back the stream, and with it stdout. Until then,
// stderr is kept up to [MaxEarlyStderr] (as a pipe's buffer would keep
// it, so a server's startup error is not lost) and the rest discarded.
//
// Read, Write, Stderr, Wait, Kill and Close may be called from different
// goroutines. The process uses one goroutine (its receive loop) until the
// stream ends; with passed pipes, one more drains stderr until Stderr is
// called.
type RemoteProcess struct {
	// fixed at start
	server       string
	pid          int
	stream       launcherv1.LauncherService_LaunchClient
	cancel       context.CancelFunc // ends the stream
	pluginExited context.Context
	opts         ClientOptions
	log          hclog.Logger
	stdout       *outPipe  // stream mode
	stderr       *outPipe  // stream mode
	pio          *passedIO // passed-fds mode; nil in stream mode

	stdinClosed atomic.Bool
	abandoned   atomic.Bool // the host cancelled the stream itself

	// sendSem is held while sending (gRPC allows one sender at a time). A
	// channel rather than a mutex, so that waiting for it can be given up.
	sendSem chan struct{}
	// stdinFrame and stdinData are reused for every stdin chunk; guarded by
	// sendSem.
	stdinFrame *launcherv1.LaunchClientFrame
	stdinData  *launcherv1.LaunchClientFrame_Stdin

	closing chan struct{} // closed when Close begins
	exited  chan struct{} // closed when the exit is known (or the stream ended); exitErr set before
	exitErr error
	done    chan struct{} // closed when the receive loop has ended; endErr set before
	endErr  error         // nil after a clean end (exit frame, then end of stream)

	stdinOnce sync.Once
	stdinErr  error
	closeOnce sync.Once
	closeErr  error

	// earlyMu guards the hand-over of stderr from the early buffer to the
	// reader Stderr returns.
	earlyMu      sync.Mutex
	stderrReader io.Reader // nil until Stderr is called
	earlyStderr  []byte    // stderr received before that, at most MaxEarlyStderr
}

// MaxEarlyStderr bounds the stderr a [RemoteProcess] keeps before
// [RemoteProcess.Stderr] is first called (a pipe's buffer).
const MaxEarlyStderr = 64 << 10

// newRemoteProcess starts the receive loop of a started process; files
// are its passed pipes, or nil in stream mode.
func newRemoteProcess(server string, pid int, stream launcherv1.LauncherService_LaunchClient,
	cancel context.CancelFunc, pluginExited context.Context, opts ClientOptions, files *stdioFiles,
) *RemoteProcess {
	stdinData := &launcherv1.LaunchClientFrame_Stdin{}
	p := &RemoteProcess{
		server:       server,
		pid:          pid,
		stream:       stream,
		cancel:       cancel,
		pluginExited: pluginExited,
		opts:         opts,
		log:          opts.Logger.With("server", server, "pid", pid),
		stdout:       newOutPipe(),
		stderr:       newOutPipe(),
		sendSem:      make(chan struct{}, 1),
		stdinFrame:   &launcherv1.LaunchClientFrame{Frame: stdinData},
		stdinData:    stdinData,
		closing:      make(chan struct{}),
		exited:       make(chan struct{}),
		done:         make(chan struct{}),
	}
	if files != nil {
		p.pio = newPassedIO(files)
	}
	p.log.Debug("process started", "io", p.Mode())
	go p.receive()
	return p
}

// Mode says how the process's I/O travels, as negotiated at the start.
func (p *RemoteProcess) Mode() IOMode {
	if p.pio != nil {
		return ModePassedFDs
	}
	return ModeStream
}

// Pid is the process id the plugin reported (0 if it has none).
func (p *RemoteProcess) Pid() int { return p.pid }

// Read reads the process's stdout. It returns io.EOF once the process has
// exited and its output is drained, or an error matching
// sdk.ErrPluginExited if the plugin died first.
func (p *RemoteProcess) Read(b []byte) (int, error) {
	if p.pio != nil {
		return passedOutput{p, p.pio.files.stdout}.Read(b)
	}
	return p.stdout.read(b)
}

// Write writes b to the process's stdin, in frames of at most 32 KiB, each
// sent at once (or straight into its pipe, with passed pipes). It blocks
// while the process does not read its stdin.
func (p *RemoteProcess) Write(b []byte) (int, error) {
	if p.pio != nil {
		return p.passedWrite(b)
	}
	written := 0
	for len(b) > 0 {
		n := min(len(b), chunkSize)
		if err := p.sendStdin(b[:n]); err != nil {
			return written, err
		}
		written += n
		b = b[n:]
	}
	return written, nil
}

func (p *RemoteProcess) sendStdin(chunk []byte) error {
	if err := p.writable(); err != nil {
		return err
	}
	if err := p.acquire(nil); err != nil {
		return fmt.Errorf("writing to stdin of %q: %w", p.server, err)
	}
	defer p.release()
	if err := p.writable(); err != nil { // Stdin().Close may have won the race
		return err
	}
	// Send encodes the frame before it returns (a copy; no stats handler
	// reads it later), so the caller's buffer is not retained.
	p.stdinData.Stdin = chunk
	err := p.stream.Send(p.stdinFrame)
	p.stdinData.Stdin = nil
	if err != nil {
		return p.sendFailed("writing to stdin", err)
	}
	return nil
}

// writable reports why stdin can take no more data, if it cannot.
func (p *RemoteProcess) writable() error {
	select {
	case <-p.closing:
		return fmt.Errorf("writing to stdin of %q: %w", p.server, io.ErrClosedPipe)
	case <-p.exited:
		return fmt.Errorf("writing to stdin of %q: the process has exited: %w", p.server, io.ErrClosedPipe)
	default:
	}
	if p.stdinClosed.Load() {
		return fmt.Errorf("writing to stdin of %q: stdin is closed: %w", p.server, io.ErrClosedPipe)
	}
	return nil
}

// Stdin returns the process's stdin: writes go through Write, and Close
// sends EOF to the process (without the rest of the shutdown sequence).
func (p *RemoteProcess) Stdin() io.WriteCloser { return remoteStdin{p} }

// Stdout returns the process's stdout, the same stream Read reads.
func (p *RemoteProcess) Stdout() io.Reader { return remoteStdout{p} }

// Stderr returns the process's stderr stream, starting with what arrived
// before the first call (up to [MaxEarlyStderr]). It reaches EOF when the
// process has exited. Callers must drain it. Every call returns the same
// reader.
func (p *RemoteProcess) Stderr() io.Reader {
	p.earlyMu.Lock()
	defer p.earlyMu.Unlock()
	if p.stderrReader == nil && p.pio != nil {
		p.stderrReader = p.passedStderr()
	}
	if p.stderrReader == nil {
		p.stderrReader = io.MultiReader(bytes.NewReader(p.earlyStderr), remoteOutput{p.stderr})
		p.earlyStderr = nil
	}
	return p.stderrReader
}

// keepEarlyStderr keeps b if no reader has asked for stderr yet, and
// reports whether it did.
func (p *RemoteProcess) keepEarlyStderr(b []byte) bool {
	p.earlyMu.Lock()
	defer p.earlyMu.Unlock()
	if p.stderrReader != nil {
		return false
	}
	room := MaxEarlyStderr - len(p.earlyStderr)
	p.earlyStderr = append(p.earlyStderr, b[:min(len(b), max(room, 0))]...)
	return true
}

type remoteStdin struct{ p *RemoteProcess }

func (s remoteStdin) Write(b []byte) (int, error) { return s.p.Write(b) }
func (s remoteStdin) Close() error                { return s.p.closeStdin(nil) }

type remoteStdout struct{ p *RemoteProcess }

func (o remoteStdout) Read(b []byte) (int, error) { return o.p.Read(b) }

type remoteOutput struct{ pipe *outPipe }

func (o remoteOutput) Read(b []byte) (int, error) { return o.pipe.read(b) }

// closeStdin sends close_stdin once; later calls return the first result.
// abandon, if not nil, gives up waiting to send.
func (p *RemoteProcess) closeStdin(abandon <-chan struct{}) error {
	p.stdinOnce.Do(func() {
		p.stdinClosed.Store(true)
		if p.pio != nil {
			// The host holds the only write end: closing it is the EOF.
			if err := p.pio.files.stdin.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
				p.stdinErr = fmt.Errorf("closing stdin of %q: %w", p.server, err)
			}
			return
		}
		p.stdinErr = p.sendControl(&launcherv1.LaunchClientFrame{Frame: &launcherv1.LaunchClientFrame_CloseStdin{
			CloseStdin: &launcherv1.CloseStdin{},
		}}, "closing stdin", abandon)
	})
	return p.stdinErr
}

// Signal asks the plugin to signal the process (its whole process group,
// for a local one). Signalling a process that has exited is not an error.
func (p *RemoteProcess) Signal(sig Signal) error {
	return p.sendControl(signalFrame(sig), "signalling", nil)
}

func signalFrame(sig Signal) *launcherv1.LaunchClientFrame {
	s := launcherv1.Signal_SIGNAL_TERM
	if sig == SignalKill {
		s = launcherv1.Signal_SIGNAL_KILL
	}
	return &launcherv1.LaunchClientFrame{Frame: &launcherv1.LaunchClientFrame_Signal{Signal: s}}
}

// sendControl sends a control frame unless the process has exited.
func (p *RemoteProcess) sendControl(f *launcherv1.LaunchClientFrame, what string, abandon <-chan struct{}) error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	if err := p.acquire(abandon); err != nil {
		if errors.Is(err, errGaveUp) {
			return fmt.Errorf("%s %q: %w", what, p.server, err)
		}
		return nil // the stream ended: nothing left to control
	}
	defer p.release()
	if err := p.stream.Send(f); err != nil {
		return p.sendFailed(what, err)
	}
	return nil
}

var errGaveUp = errors.New("gave up waiting to send")

// acquire takes the send semaphore, unless the stream ends, the process
// exits, or abandon is closed first.
func (p *RemoteProcess) acquire(abandon <-chan struct{}) error {
	select {
	case p.sendSem <- struct{}{}:
		return nil
	case <-p.done:
		return p.endedErr()
	case <-abandon:
		return errGaveUp
	}
}

func (p *RemoteProcess) release() { <-p.sendSem }

// sendFailed explains a failed Send. gRPC reports a broken stream to the
// sender as io.EOF; the real reason reaches the receive loop.
func (p *RemoteProcess) sendFailed(what string, err error) error {
	select {
	case <-p.done:
		return fmt.Errorf("%s of %q: %w", what, p.server, p.endedErr())
	default:
		return fmt.Errorf("%s of %q: the launch stream ended (%v): %w", what, p.server, err, io.ErrClosedPipe)
	}
}

// outputEnd is what reading an output returns once it ended; call only
// after done.
func (p *RemoteProcess) outputEnd() error {
	if p.endErr == nil || errors.Is(p.endErr, errAbandoned) {
		return io.EOF
	}
	return fmt.Errorf("reading output of %q: %w", p.server, p.endErr)
}

// endedErr is the reason the stream ended; call only after done.
func (p *RemoteProcess) endedErr() error {
	if p.endErr == nil || errors.Is(p.endErr, errAbandoned) {
		return io.ErrClosedPipe
	}
	return p.endErr
}

// Wait blocks until the process exited and returns nil for exit status 0,
// a [*ExitError] otherwise, an error matching sdk.ErrPluginExited if the
// plugin died first, or ctx's error.
func (p *RemoteProcess) Wait(ctx context.Context) error {
	select {
	case <-p.exited:
		return p.exitErr
	default:
	}
	select {
	case <-p.exited:
		return p.exitErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Kill asks the plugin for SIGKILL at once and, if the exit is not
// reported within KillGrace, abandons the stream (the plugin then kills
// the process too). It does not wait for the exit; Wait or Close does.
func (p *RemoteProcess) Kill() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	giveUp := make(chan struct{})
	timer := time.AfterFunc(p.opts.KillGrace, func() {
		close(giveUp)
		p.abandonUnlessExited()
	})
	err := p.sendControl(signalFrame(SignalKill), "killing", giveUp)
	if err != nil {
		timer.Stop()
		p.abandon()
	}
	return nil
}

func (p *RemoteProcess) abandon() {
	p.abandoned.Store(true)
	p.cancel()
}

func (p *RemoteProcess) abandonUnlessExited() {
	select {
	case <-p.exited:
	default:
		p.abandon()
	}
}

// Close ends the process (see [RemoteProcess]) and returns once its exit
// is known or it was given up on. It returns nil unless the stream broke:
// then the error says why (for instance it matches sdk.ErrPluginExited).
func (p *RemoteProcess) Close() error {
	p.closeOnce.Do(func() { p.closeErr = p.shutdown() })
	return p.closeErr
}

func (p *RemoteProcess) shutdown() error {
	close(p.closing)
	if p.pio != nil {
		p.earlyMu.Lock()
		stderrTaken := p.pio.stderrTaken
		p.earlyMu.Unlock()
		p.pio.discardOutputs(stderrTaken)
		defer p.pio.closeAll()
	}
	// The plugin runs the stop sequence (close stdin, StdinGrace, SIGTERM,
	// TermGrace, SIGKILL) and reports the exit; KillGrace is its margin.
	// A Send blocked by flow control (the plugin no longer takes stdin),
	// a plugin that predates the stop frame, or one that does not report
	// the exit, is given up on when that runs out: abandoning the stream
	// makes the plugin kill the process.
	giveUp := make(chan struct{})
	bound := time.AfterFunc(p.opts.StdinGrace+p.opts.TermGrace+p.opts.KillGrace, func() { close(giveUp) })
	defer bound.Stop()
	// EOF on stdin is how MCP asks a stdio server to exit; a plugin that
	// predates stop knows only this step.
	_ = p.closeStdin(giveUp)
	_ = p.sendControl(&launcherv1.LaunchClientFrame{Frame: &launcherv1.LaunchClientFrame_Stop{Stop: &launcherv1.Stop{
		StdinGraceMs: p.opts.StdinGrace.Milliseconds(),
		TermGraceMs:  p.opts.TermGrace.Milliseconds(),
	}}}, "stopping", giveUp)
	select {
	case <-p.exited:
	case <-giveUp:
		select {
		case <-p.exited:
		default:
			p.log.Warn("launcher did not report the process's exit after the stop sequence; abandoning its stream",
				"stdin_grace", p.opts.StdinGrace, "term_grace", p.opts.TermGrace, "margin", p.opts.KillGrace)
			p.abandon()
		}
	}
	// The exit is known: the plugin ends the stream right after it.
	timer := time.NewTimer(p.opts.KillGrace)
	select {
	case <-p.done:
	case <-timer.C:
		p.abandon()
		<-p.done
	}
	timer.Stop()
	if p.endErr == nil || errors.Is(p.endErr, errAbandoned) {
		return nil
	}
	return fmt.Errorf("closing %q: %w", p.server, p.endErr)
}

// receive is the process's one goroutine: it reads the plugin's frames and
// hands stdout and stderr to their readers, one frame at a time.
func (p *RemoteProcess) receive() {
	defer close(p.done)
	exitSeen := false
	var end error
loop:
	for {
		f, err := p.stream.Recv()
		if err != nil {
			switch {
			case errors.Is(err, io.EOF) && exitSeen:
			case errors.Is(err, io.EOF):
				end = wire.BadResponse("the launch stream ended without an exit frame")
			case p.abandoned.Load():
				end = errAbandoned
			default:
				end = wire.FromRPC(context.Background(), err, p.pluginExited)
			}
			break
		}
		switch x := f.GetFrame().(type) {
		case *launcherv1.LaunchServerFrame_Stdout:
			if p.pio != nil {
				end = errOutputAfterHandoff()
				p.abandon()
				break loop
			}
			p.stdout.deliver(x.Stdout, p.closing)
		case *launcherv1.LaunchServerFrame_Stderr:
			if p.pio != nil {
				end = errOutputAfterHandoff()
				p.abandon()
				break loop
			}
			if !p.keepEarlyStderr(x.Stderr) {
				p.stderr.deliver(x.Stderr, p.closing)
			}
		case *launcherv1.LaunchServerFrame_Exit:
			if exitSeen {
				end = wire.BadResponse("a second exit frame")
				p.abandon()
				break loop
			}
			exitSeen = true
			p.exitErr = exitFromPB(x.Exit)
			close(p.exited)
			p.log.Debug("process exited", "status", errString(p.exitErr))
		default:
			end = wire.BadResponse("unexpected launch frame %T after the start", x)
			p.abandon()
			break loop
		}
	}
	p.endErr = end
	if !exitSeen {
		if errors.Is(end, errAbandoned) {
			p.exitErr = fmt.Errorf("process of %q: killed: %w", p.server, end)
		} else {
			p.exitErr = fmt.Errorf("process of %q: %w", p.server, end)
		}
		close(p.exited)
	}
	if p.pio != nil {
		p.endPassedIO(exitSeen && end == nil)
	} else {
		outErr := error(io.EOF)
		if end != nil && !errors.Is(end, errAbandoned) {
			outErr = fmt.Errorf("reading output of %q: %w", p.server, end)
		}
		p.stdout.finish(outErr)
		p.stderr.finish(outErr)
	}
	p.cancel() // releases the stream's resources
}

func errOutputAfterHandoff() error {
	return wire.BadResponse("output frames after the process's pipes were passed to the host")
}

// endPassedIO settles the passed pipes once the stream has ended. After a
// clean exit the outputs stay readable until they reach EOF, or a grace
// later for a descendant that keeps them open; stdin takes no more. After
// anything else nobody will report on the process again: the pipes are
// closed at once, which also ends a process the plugin could not kill
// (it sees EOF on stdin).
func (p *RemoteProcess) endPassedIO(clean bool) {
	_ = p.pio.files.stdin.Close()
	if clean {
		p.pio.closeOutputsAfter(outputDrainGrace)
		return
	}
	p.pio.closeOutputs()
}

func exitFromPB(e *launcherv1.Exit) error {
	if e.GetCode() == 0 && e.GetSignal() == "" && e.GetMessage() == "" {
		return nil
	}
	return &ExitError{Code: int(e.GetCode()), Signal: e.GetSignal(), Message: e.GetMessage()}
}

func errString(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}
