//go:build unix || windows

package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/internal/contain"
)

// Launch starts spec's command as a child of the host. The child gets
// exactly spec.Env, its own process group, and SIGKILL when the host dies
// (its internal/contain cell: Pdeathsig and a cgroup on Linux, the
// supervisor on other Unixes, a Job Object on Windows; see the package
// documentation).
// ctx bounds only the start; the process lives until Close or Kill.
//
// Errors that mean the process could not be started wrap [ErrStart] and say
// how to fix the spec.
func (l *Local) Launch(ctx context.Context, spec Spec) (Process, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrStart, spec.Server, err)
	}
	if len(spec.RemoteEnv) > 0 {
		return nil, fmt.Errorf("%w %q: env_vars %v have source = \"remote\", which the local launcher cannot read; use source = \"local\" or an environment whose launcher runs the server elsewhere",
			ErrStart, spec.Server, spec.RemoteEnv)
	}
	if spec.Dir != "" {
		if err := checkDir(spec.Server, spec.Dir); err != nil {
			return nil, err
		}
	}
	path, err := hostPlatform().resolveCommand(spec.Server, spec.Command, spec.Env, spec.Dir)
	if err != nil {
		return nil, err
	}
	log := l.logger().With("server", spec.Server)

	// Our own pipes rather than cmd.StdoutPipe: exec closes its pipes inside
	// cmd.Wait, which would drop the last bytes a server wrote before it
	// exited and race with a pending Read.
	pipes, err := newStdioPipes()
	if err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrStart, spec.Server, err)
	}
	cmd := exec.Command(path, spec.Args...)
	cmd.Args[0] = spec.Command // argv[0] as the user wrote it, as a shell would pass it
	cmd.Env = append([]string{}, spec.Env...)
	cmd.Dir = spec.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pipes.childStdin, pipes.childStdout, pipes.childStderr

	p := &localProcess{
		server:     spec.Server,
		log:        log,
		stdinGrace: positiveOr(l.stdinGrace, DefaultStdinGrace),
		termGrace:  positiveOr(l.termGrace, DefaultTermGrace),
		stdin:      pipes.stdin,
		stdout:     pipes.stdout,
		stderr:     &stderrStream{file: pipes.stderr},
	}
	proc, err := l.startOS(ctx, spec, path, cmd, contain.StartOptions{
		CloseStdin: pipes.stdin.Close,
		ExitGrace:  p.termGrace,
		// The reaper may call it before Launch returns: it reads only what
		// exists before the reaper starts.
		OnEscalate: func(step contain.Step, after time.Duration) { logEscalation(log, cmd, step, after) },
		OnExit:     func(state *os.ProcessState, cellErr error) { logExit(log, cmd, state, cellErr) },
	})
	pipes.closeChildEnds()
	if err != nil {
		pipes.closeParentEnds()
		return nil, fmt.Errorf("%w %q: run %s: %w", ErrStart, spec.Server, path, err)
	}
	p.proc, p.pid = proc, proc.Pid()
	p.log = log.With("pid", p.pid)
	p.log.Debug("started server process", "command", path)
	return p, nil
}

type stdioPipes struct {
	stdin, stdout, stderr                *os.File // the host's ends
	childStdin, childStdout, childStderr *os.File
}

func newStdioPipes() (*stdioPipes, error) {
	var p stdioPipes
	var err error
	if p.childStdin, p.stdin, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("create stdin pipe: %w", err)
	}
	if p.stdout, p.childStdout, err = os.Pipe(); err != nil {
		p.closeChildEnds()
		p.closeParentEnds()
		return nil, fmt.Errorf("create stdout pipe: %w", err)
	}
	if p.stderr, p.childStderr, err = os.Pipe(); err != nil {
		p.closeChildEnds()
		p.closeParentEnds()
		return nil, fmt.Errorf("create stderr pipe: %w", err)
	}
	return &p, nil
}

func (p *stdioPipes) closeChildEnds() {
	closeFiles(p.childStdin, p.childStdout, p.childStderr)
}

func (p *stdioPipes) closeParentEnds() {
	closeFiles(p.stdin, p.stdout, p.stderr)
}

func closeFiles(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			_ = f.Close()
		}
	}
}

// localProcess is a child started by Local: its pipes, and its
// contain.Process, which owns reaping and stopping it on every OS.
type localProcess struct {
	// fixed at start
	server     string
	pid        int
	log        hclog.Logger
	stdinGrace time.Duration
	termGrace  time.Duration
	stdin      *os.File
	stdout     *os.File
	stderr     *stderrStream
	proc       *contain.Process

	closeOnce sync.Once
	closeErr  error
}

var _ Process = (*localProcess)(nil)

// Read reads the child's stdout. After Close it returns io.EOF.
func (p *localProcess) Read(b []byte) (int, error) {
	n, err := p.stdout.Read(b)
	if errors.Is(err, os.ErrClosed) {
		err = io.EOF
	}
	return n, err
}

// Write writes to the child's stdin. It fails after Close, or once the
// child has closed its stdin (EPIPE).
func (p *localProcess) Write(b []byte) (int, error) {
	n, err := p.stdin.Write(b)
	if err != nil {
		return n, fmt.Errorf("write to server %q stdin: %w", p.server, err)
	}
	return n, nil
}

func (p *localProcess) Stderr() io.Reader {
	p.stderr.taken.Store(true)
	return p.stderr
}

func (p *localProcess) Pid() int { return p.pid }

func (p *localProcess) Wait(ctx context.Context) error {
	select {
	case <-p.proc.Done():
		return p.waitErr()
	default:
	}
	select {
	case <-p.proc.Done():
		return p.waitErr()
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *localProcess) waitErr() error {
	if err := p.proc.Err(); err != nil {
		return fmt.Errorf("run server %q: %w", p.server, err)
	}
	return nil
}

// Kill ends the server and everything it started at once. It does not
// wait; Close (still needed to release the pipes) or Wait does.
func (p *localProcess) Kill() error {
	if err := p.proc.Kill(); err != nil {
		return fmt.Errorf("server %q: %w", p.server, err)
	}
	return nil
}

// Close stops the server with internal/contain's one escalation (close
// stdin, StdinGrace, SIGTERM the group and cell, TermGrace, kill them;
// Windows: terminate the job after StdinGrace). It returns once the
// leader is reaped and the rest of its cell ended, and closes stdout so
// a pending Read returns.
func (p *localProcess) Close() error {
	p.closeOnce.Do(func() { p.closeErr = p.shutdown() })
	return p.closeErr
}

func (p *localProcess) shutdown() error {
	var errs []error
	if err := p.proc.Stop(context.Background(), p.stdinGrace, p.termGrace); err != nil {
		errs = append(errs, fmt.Errorf("stop server %q: %w", p.server, err))
	}
	if err := p.stdout.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		errs = append(errs, fmt.Errorf("close stdout of server %q: %w", p.server, err))
	}
	p.stderr.finish()
	return errors.Join(errs...)
}

// logEscalation logs each step past the first of a stop (a kill as a
// warning: the server, or what it started, ignored the gentler ones).
func logEscalation(log hclog.Logger, cmd *exec.Cmd, step contain.Step, after time.Duration) {
	level := hclog.Debug
	if step == contain.StepKill {
		level = hclog.Warn
	}
	log.Log(level, "server or what it started still running; escalating shutdown",
		"pid", cmd.Process.Pid, "step", step.String(), "after", after)
}

// logExit logs the server's end, and what of it could not be ended.
func logExit(log hclog.Logger, cmd *exec.Cmd, state *os.ProcessState, cellErr error) {
	log = log.With("pid", cmd.Process.Pid)
	if cellErr != nil {
		log.Warn("could not end every process the server started", "error", cellErr)
	}
	log.Debug("server process exited", "status", state.String())
}

// stderrStream is the host's end of the child's stderr. The reader closes
// the file when it reaches EOF; Close bounds how long that may take.
type stderrStream struct {
	file      *os.File
	taken     atomic.Bool
	closeOnce sync.Once
}

func (s *stderrStream) Read(b []byte) (int, error) {
	n, err := s.file.Read(b)
	if err != nil {
		s.closeOnce.Do(func() { _ = s.file.Close() })
		if errors.Is(err, os.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded) {
			err = io.EOF
		}
	}
	return n, err
}

// finish runs after the process group is gone. Whatever it wrote is in the
// pipe already: a reader gets stderrDrainGrace to read it (only a
// descendant that left the group could keep the pipe open longer). With no
// reader at all, the pipe is closed now.
func (s *stderrStream) finish() {
	if !s.taken.Load() {
		s.closeOnce.Do(func() { _ = s.file.Close() })
		return
	}
	_ = s.file.SetReadDeadline(time.Now().Add(stderrDrainGrace))
}
