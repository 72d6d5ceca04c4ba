package launcher

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os/exec"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/internal/contain"
	"github.com/toolgate/toolgate/sdk/internal/pb/launcherv1"
	"github.com/toolgate/toolgate/sdk/internal/wire"
)

// chunkSize is the most data one frame carries, either way. Reads return
// whatever the pipe holds (a short JSON line goes out at once); this only
// caps big writes, well under gRPC's message limits.
const chunkSize = 32 << 10

const (
	// outputDrainGrace is how long the shim keeps reading stdout and
	// stderr after the process exited, for a descendant that inherited
	// them; then it closes them and reports the exit.
	outputDrainGrace = time.Second
	// abandonedWaitGrace bounds the wait for the process after the host
	// abandoned the stream and the shim killed it.
	abandonedWaitGrace = 5 * time.Second
)

// server is the plugin-side shim: it runs the author's Launcher and carries
// each process's I/O over its stream.
type server struct {
	launcherv1.UnimplementedLauncherServiceServer
	impl   Launcher
	log    hclog.Logger
	faults fdFaults // tests only
}

func (s *server) Launch(stream launcherv1.LauncherService_LaunchServer) (err error) {
	defer wire.Recover(s.log, "Launch", &err)
	ctx := stream.Context()
	first, err := stream.Recv()
	if err != nil {
		return nil // the host went away before asking for anything
	}
	start := first.GetStart()
	if start == nil {
		return wire.InvalidRequest("the first frame of a launch stream must be start, got %T", first.GetFrame())
	}
	spec := Spec{
		Server:    start.GetServer(),
		Command:   start.GetCommand(),
		Args:      start.GetArgs(),
		Env:       start.GetEnv(),
		Dir:       start.GetDir(),
		RemoteEnv: start.GetRemoteEnv(),
	}
	log := s.log.With("server", spec.Server)
	proc, err := s.impl.Start(ctx, spec)
	if err != nil {
		se := classifyStartError(err)
		log.Debug("process did not start", "kind", se.Kind, "error", se.Message)
		return stream.Send(&launcherv1.LaunchServerFrame{Frame: &launcherv1.LaunchServerFrame_Error{Error: &launcherv1.StartError{
			Message:       se.Message,
			Kind:          errorKindToPB[se.Kind],
			StderrExcerpt: truncate(se.StderrExcerpt, MaxStderrExcerpt),
		}}})
	}
	r := &run{stream: stream, proc: proc, log: log.With("pid", proc.Pid()), faults: s.faults, exited: make(chan struct{})}
	defer r.waitStopped()
	return r.serve(ctx, start.GetAcceptFds())
}

func classifyStartError(err error) *StartError {
	var se *StartError
	if errors.As(err, &se) {
		return se
	}
	kind := KindOther
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		kind = KindNotFound
	case errors.Is(err, fs.ErrPermission):
		kind = KindPermission
	}
	return &StartError{Kind: kind, Message: err.Error()}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

var errorKindToPB = map[ErrorKind]launcherv1.StartErrorKind{
	KindOther:      launcherv1.StartErrorKind_START_ERROR_KIND_OTHER,
	KindNotFound:   launcherv1.StartErrorKind_START_ERROR_KIND_NOT_FOUND,
	KindPermission: launcherv1.StartErrorKind_START_ERROR_KIND_PERMISSION,
	KindExecutor:   launcherv1.StartErrorKind_START_ERROR_KIND_EXECUTOR,
}

// run carries one started process over its stream. It uses four
// goroutines for the life of the process, never one per chunk: the
// handler's (waits and reports the exit), one per output (stdout, stderr),
// and one receiving stdin and signals. After its pipes were passed to the
// host, only two: the handler's and the receiver of signals.
type run struct {
	stream launcherv1.LauncherService_LaunchServer
	proc   Process
	log    hclog.Logger
	faults fdFaults

	// sendMu serializes Send: gRPC allows one sender at a time.
	sendMu sync.Mutex

	// exited is closed once the handler's wait for the process returned.
	exited chan struct{}
	// stopMu guards stopDone (the stop sequence's goroutine, once the
	// host asked for it) and finished (the handler no longer waits for
	// one).
	stopMu   sync.Mutex
	stopDone chan struct{}
	finished bool
}

func (r *run) send(f *launcherv1.LaunchServerFrame) error {
	r.sendMu.Lock()
	defer r.sendMu.Unlock()
	return r.stream.Send(f)
}

func (r *run) serve(ctx context.Context, hostAcceptsFDs bool) error {
	// The host abandoning the stream (cancel, lost connection) means
	// nobody will ever read this process again: end it.
	stopKill := context.AfterFunc(ctx, func() {
		r.log.Debug("launch stream ended before the process exited; killing it")
		_ = r.proc.Signal(SignalKill)
	})
	defer stopKill()

	var offer *fdOffer
	if hostAcceptsFDs && !r.faults.noOffer {
		var err error
		if offer, err = newFDOffer(r.proc, r.faults); err != nil {
			r.log.Debug("not offering the process's pipes to the host; streaming them", "reason", err)
		}
	}
	started := &launcherv1.Started{Pid: int64(r.proc.Pid())}
	if offer != nil {
		started.FdOffer = offer.pb()
	}
	if err := r.send(&launcherv1.LaunchServerFrame{Frame: &launcherv1.LaunchServerFrame_Started{Started: started}}); err != nil {
		_ = r.proc.Signal(SignalKill)
	}
	if offer != nil {
		passed, err := r.settleOffer(offer)
		if err != nil {
			_ = r.proc.Signal(SignalKill)
			r.reapAbandoned(ctx)
			return err
		}
		if passed {
			return r.servePassed(ctx)
		}
	}

	pumped := make(chan struct{}, 2) // one token per output at EOF
	go func() { r.pump(r.proc.Stdout(), true); pumped <- struct{}{} }()
	go func() { r.pump(r.proc.Stderr(), false); pumped <- struct{}{} }()
	go r.receive(ctx)

	waitErr := r.wait(ctx)

	timer := time.NewTimer(outputDrainGrace)
	for drained := 0; drained < 2; drained++ {
		select {
		case <-pumped:
		case <-timer.C:
			r.log.Debug("process exited but its output is still open (a descendant holds it); closing it")
			closeIfCloser(r.proc.Stdout())
			closeIfCloser(r.proc.Stderr())
			<-pumped
		}
	}
	timer.Stop()
	// Unblocks the receive goroutine if it is writing to a stdin that a
	// descendant keeps open without reading.
	r.closePipes()

	if ctx.Err() != nil {
		return nil // nobody to tell
	}
	return r.send(&launcherv1.LaunchServerFrame{Frame: &launcherv1.LaunchServerFrame_Exit{Exit: exitToPB(waitErr)}})
}

// wait waits for the process; once the host has abandoned the stream (and
// the process was killed), for abandonedWaitGrace at most. It closes
// r.exited, which ends a stop sequence's waits.
func (r *run) wait(ctx context.Context) error {
	defer close(r.exited)
	err := r.proc.Wait(ctx)
	if ctx.Err() != nil {
		waitCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abandonedWaitGrace)
		err = r.proc.Wait(waitCtx)
		cancel()
	}
	return err
}

// stop runs the stop sequence the host asked for, once, in a goroutine of
// its own (the receiver goes on applying frames: a later kill must not
// wait behind the graces). A [Stopper] runs its own; any other process
// gets the same steps (internal/contain.Escalate) through Stdin().Close
// and Signal.
func (r *run) stop(ctx context.Context, f *launcherv1.Stop) {
	stdinGrace := graceOf(f.GetStdinGraceMs(), DefaultStdinGrace)
	termGrace := graceOf(f.GetTermGraceMs(), DefaultTermGrace)
	r.stopMu.Lock()
	defer r.stopMu.Unlock()
	if r.stopDone != nil || r.finished {
		return
	}
	done := make(chan struct{})
	r.stopDone = done
	r.log.Debug("stopping the process", "stdin_grace", stdinGrace, "term_grace", termGrace)
	go func() {
		defer close(done)
		var err error
		if s, ok := r.proc.(Stopper); ok {
			err = s.Stop(ctx, stdinGrace, termGrace)
		} else {
			err = contain.Escalate(ctx, r.exited, r.takeStep, stdinGrace, termGrace, nil)
		}
		if err != nil {
			r.log.Debug("stop sequence failed", "error", err)
		}
	}()
}

// takeStep is one step of the stop sequence on a process that is not a
// [Stopper].
func (r *run) takeStep(step contain.Step) error {
	switch step {
	case contain.StepCloseStdin:
		return r.proc.Stdin().Close()
	case contain.StepTerm:
		return r.proc.Signal(SignalTerm)
	default:
		return r.proc.Signal(SignalKill)
	}
}

// waitStopped waits for a stop sequence that has begun; none starts
// after it.
func (r *run) waitStopped() {
	r.stopMu.Lock()
	r.finished = true
	done := r.stopDone
	r.stopMu.Unlock()
	if done != nil {
		<-done
	}
}

// graceOf reads a grace in milliseconds from the wire; zero or less (a
// host that sent none) means def.
func graceOf(ms int64, def time.Duration) time.Duration {
	if ms <= 0 {
		return def
	}
	return time.Duration(ms) * time.Millisecond
}

// reapAbandoned waits (bounded) for a killed process that will not be
// served, and closes its pipes.
func (r *run) reapAbandoned(ctx context.Context) {
	waitCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abandonedWaitGrace)
	_ = r.proc.Wait(waitCtx)
	cancel()
	r.closePipes()
}

// closePipes closes the shim's copies of the process's pipes.
func (r *run) closePipes() {
	_ = r.proc.Stdin().Close()
	closeIfCloser(r.proc.Stdout())
	closeIfCloser(r.proc.Stderr())
}

// settleOffer waits for the host's answer to a descriptor offer and
// reports whether the host took the pipes. The process's pipes are not
// touched until then, so either mode can follow. An error is a host that
// broke the protocol; the stream must end.
func (r *run) settleOffer(offer *fdOffer) (passed bool, err error) {
	f, recvErr := r.stream.Recv()
	sent, handOffErr := offer.close()
	if recvErr != nil {
		return false, nil // the host is gone; the stream's end kills the process
	}
	handoff := f.GetFdHandoff()
	switch {
	case handoff == nil:
		return false, wire.InvalidRequest("after an fd offer the host must send fd_handoff first, got %T", f.GetFrame())
	case handoff.GetTaken() && !sent:
		return false, wire.InvalidRequest("the host says it took the process's descriptors, but none were sent (%v)", handOffErr)
	case !handoff.GetTaken():
		r.log.Debug("the host did not take the process's pipes; streaming them",
			"host_reason", truncate(handoff.GetReason(), 256), "error", handOffErr)
		return false, nil
	}
	return true, nil
}

// servePassed runs a process whose pipes the host took: the shim closes
// its copies and never touches them again; it still applies signals,
// reaps the process and reports its exit.
func (r *run) servePassed(ctx context.Context) error {
	r.closePipes()
	r.log.Debug("process's pipes passed to the host")
	go r.receive(ctx)
	waitErr := r.wait(ctx)
	if ctx.Err() != nil {
		return nil // nobody to tell
	}
	return r.send(&launcherv1.LaunchServerFrame{Frame: &launcherv1.LaunchServerFrame_Exit{Exit: exitToPB(waitErr)}})
}

func closeIfCloser(r io.Reader) {
	if c, ok := r.(io.Closer); ok {
		_ = c.Close()
	}
}

// pump sends one output of the process as it comes. Each read goes out at
// once, whatever its size, so a short line is never held back. buf and
// frame are reused: Send encodes the frame before it returns (we install
// no stats handler that could read it later), and the encoding is a copy.
func (r *run) pump(src io.Reader, stdout bool) {
	buf := make([]byte, chunkSize)
	frame := &launcherv1.LaunchServerFrame{}
	var setData func([]byte)
	if stdout {
		payload := &launcherv1.LaunchServerFrame_Stdout{}
		frame.Frame = payload
		setData = func(b []byte) { payload.Stdout = b }
	} else {
		payload := &launcherv1.LaunchServerFrame_Stderr{}
		frame.Frame = payload
		setData = func(b []byte) { payload.Stderr = b }
	}
	streamBroken := false
	for {
		n, err := src.Read(buf)
		if n > 0 && !streamBroken {
			setData(buf[:n])
			// After a failed send, keep draining so that the process never
			// blocks on a full pipe while it is being killed.
			streamBroken = r.send(frame) != nil
			setData(nil)
		}
		if err != nil {
			return
		}
	}
}

// receive applies the host's frames to the process until the stream ends.
// Writes to stdin block while the process does not read: that is the back
// pressure that stops the host's sends.
func (r *run) receive(ctx context.Context) {
	stdin := r.proc.Stdin()
	for {
		f, err := r.stream.Recv()
		if err != nil {
			// io.EOF: the host will send nothing more, stdin included.
			_ = stdin.Close()
			return
		}
		switch f := f.GetFrame().(type) {
		case *launcherv1.LaunchClientFrame_Stdin:
			if _, err := stdin.Write(f.Stdin); err != nil {
				r.log.Trace("writing to process stdin failed", "error", err)
			}
		case *launcherv1.LaunchClientFrame_CloseStdin:
			_ = stdin.Close()
		case *launcherv1.LaunchClientFrame_Signal:
			switch f.Signal {
			case launcherv1.Signal_SIGNAL_TERM:
				_ = r.proc.Signal(SignalTerm)
			case launcherv1.Signal_SIGNAL_KILL:
				_ = r.proc.Signal(SignalKill)
			}
		case *launcherv1.LaunchClientFrame_Stop:
			r.stop(ctx, f.Stop)
		default:
			r.log.Warn("ignoring unexpected launch frame from the host", "frame", f)
		}
	}
}

func exitToPB(err error) *launcherv1.Exit {
	if err == nil {
		return &launcherv1.Exit{Code: 0}
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return &launcherv1.Exit{Code: int32(ee.Code), Signal: ee.Signal, Message: ee.Message}
	}
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		e := exitErrorOf(xe)
		return &launcherv1.Exit{Code: int32(e.Code), Signal: e.Signal, Message: e.Message}
	}
	return &launcherv1.Exit{Code: -1, Message: err.Error()}
}
