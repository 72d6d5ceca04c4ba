package executor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/sdk/launcher"
)

const (
	// maxEarlyStderr bounds what is kept of the executor's stderr before
	// the marker (ssh warnings, kubectl notices): it is forwarded to the
	// host once the command runs, or quoted in the start error.
	maxEarlyStderr = 64 << 10
	// reapGrace bounds the wait for an executor that gave up or was
	// killed during the start, so that Start never hangs on it.
	reapGrace = 5 * time.Second
)

// scan is what the stderr scanner found.
type scan struct {
	found  bool
	before []byte // stderr before the marker line (capped)
	after  []byte // stderr read past the marker line
}

// scanForMarker reads r until the marker line or EOF.
func scanForMarker(r io.Reader, marker string) scan {
	line := []byte(marker + "\n")
	var buf []byte
	dropped := 0
	chunk := make([]byte, 32<<10)
	for {
		n, err := r.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if i := bytes.Index(buf, line); i >= 0 {
			before := buf[:i]
			if over := len(before) - maxEarlyStderr; over > 0 {
				dropped += over
				before = before[over:]
			}
			return scan{found: true, before: withDropNote(before, dropped), after: buf[i+len(line):]}
		}
		// Keep the end of the output: it says why an executor gave up,
		// and it holds the start of a marker split across two reads.
		if over := len(buf) - maxEarlyStderr; over > 0 {
			dropped += over
			buf = buf[:copy(buf, buf[over:])]
		}
		if err != nil {
			return scan{before: withDropNote(buf, dropped)}
		}
	}
}

// withDropNote says, in the output itself, that its start was dropped.
func withDropNote(b []byte, dropped int) []byte {
	if dropped == 0 {
		return b
	}
	note := fmt.Sprintf("[launcher-exec dropped the first %d bytes of the executor's output]\n", dropped)
	return append([]byte(note), b...)
}

// awaitReady waits for proc's start script to print the marker. On success
// the returned process replays the executor's earlier stderr before the
// rest; otherwise proc is ended and reaped and the error says why.
func awaitReady(ctx context.Context, proc launcher.Process, spec launcher.Spec, inv *invocation, log hclog.Logger) (launcher.Process, error) {
	scanned := make(chan scan, 1)
	go func() { scanned <- scanForMarker(proc.Stderr(), inv.marker) }()

	var s scan
	select {
	case s = <-scanned:
	case <-ctx.Done():
		_ = proc.Signal(launcher.SignalKill)
		s = waitScan(scanned, proc)
		reap(proc)
		return nil, &launcher.StartError{
			Kind:          launcher.KindExecutor,
			Message:       fmt.Sprintf("the executor did not start the command %s before the start was cancelled (%v); %s", inv.where, ctx.Err(), inv.hint),
			StderrExcerpt: excerpt(s.before),
		}
	}
	if s.found {
		log.Debug("start script reached the command")
		early := make([]byte, 0, len(s.before)+len(s.after))
		early = append(append(early, s.before...), s.after...)
		return &readyProcess{Process: proc, stderr: &replayStderr{
			Reader: io.MultiReader(bytes.NewReader(early), proc.Stderr()),
			raw:    proc.Stderr(),
		}}, nil
	}

	// The executor closed its stderr without the marker: it is exiting.
	waitCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reapGrace)
	exitErr := proc.Wait(waitCtx)
	cancel()
	if errors.Is(exitErr, context.DeadlineExceeded) {
		_ = proc.Signal(launcher.SignalKill)
		exitErr = errors.New("it closed its stderr but did not exit, so it was killed")
	}
	reap(proc)
	stderr := string(s.before)
	log.Debug("executor gave up before the command ran", "status", exitText(exitErr))
	return nil, startFailure(spec, inv, stderr, exitErr)
}

// startFailure explains an executor that ended before the marker.
func startFailure(spec launcher.Spec, inv *invocation, stderr string, exitErr error) *launcher.StartError {
	se := &launcher.StartError{StderrExcerpt: excerpt([]byte(stripScriptLines(stderr)))}
	switch {
	case strings.Contains(stderr, notFoundLine):
		se.Kind = launcher.KindNotFound
		se.Message = fmt.Sprintf("command %q not found %s: install it there, or set command to its absolute path", spec.Command, inv.where)
	case strings.Contains(stderr, dirMissingLine):
		se.Kind = launcher.KindNotFound
		se.Message = fmt.Sprintf("working directory %q does not exist %s: create it, or fix cwd in the server or environment block", spec.Dir, inv.where)
	default:
		se.Kind = launcher.KindExecutor
		se.Message = fmt.Sprintf("the executor ended (%s) before it started the command %s; %s", exitText(exitErr), inv.where, inv.hint)
	}
	return se
}

// stripScriptLines removes the start script's own verdict lines, which the
// message already says in words.
func stripScriptLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		if !strings.HasPrefix(l, scriptTag) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// excerpt keeps the end of b, where executors put the reason they gave
// up, within what the protocol carries.
func excerpt(b []byte) string {
	if len(b) <= launcher.MaxStderrExcerpt {
		return string(b)
	}
	const mark = "…"
	return mark + string(b[len(b)-launcher.MaxStderrExcerpt+len(mark):])
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// waitScan waits for the scanner after the executor was killed; if a
// descendant still holds stderr open, it closes stderr to end the scan.
func waitScan(scanned <-chan scan, proc launcher.Process) scan {
	timer := time.NewTimer(reapGrace)
	defer timer.Stop()
	select {
	case s := <-scanned:
		return s
	case <-timer.C:
		closeIfCloser(proc.Stderr())
		return <-scanned
	}
}

// reap waits (bounded) for a process that will not be handed to the shim
// and closes its pipes.
func reap(proc launcher.Process) {
	ctx, cancel := context.WithTimeout(context.Background(), reapGrace)
	defer cancel()
	if err := proc.Wait(ctx); errors.Is(err, context.DeadlineExceeded) {
		_ = proc.Signal(launcher.SignalKill)
	}
	_ = proc.Stdin().Close()
	closeIfCloser(proc.Stdout())
	closeIfCloser(proc.Stderr())
}

func closeIfCloser(r io.Reader) {
	if c, ok := r.(io.Closer); ok {
		_ = c.Close()
	}
}

// readyProcess is an executor whose stderr starts with what it wrote
// before the marker.
type readyProcess struct {
	launcher.Process
	stderr *replayStderr
}

func (p *readyProcess) Stderr() io.Reader { return p.stderr }

// Stop forwards to the executor's process, so that its own stop sequence
// (launcher.StartCommand's: internal/contain's Process.Stop) runs. Start
// makes every process with StartCommand, so it is always a Stopper.
func (p *readyProcess) Stop(ctx context.Context, stdinGrace, termGrace time.Duration) error {
	s, ok := p.Process.(launcher.Stopper)
	if !ok {
		return errors.New("launcher-exec: the executor's process has no stop sequence")
	}
	return s.Stop(ctx, stdinGrace, termGrace)
}

// replayStderr is closable, so that the shim can end a read that a
// descendant holding the pipe would otherwise keep waiting.
type replayStderr struct {
	io.Reader
	raw io.Reader
}

func (r *replayStderr) Close() error {
	if c, ok := r.raw.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
