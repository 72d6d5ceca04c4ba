//go:build unix

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
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Launch starts spec's command as a child of the host. The child gets
// exactly spec.Env, its own process group, and SIGKILL when the host dies
// (through Pdeathsig on Linux, through a watchdog elsewhere; see the
// package documentation).
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
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}

	release, dog, err := l.start(ctx, cmd)
	pipes.closeChildEnds()
	if err != nil {
		pipes.closeParentEnds()
		return nil, fmt.Errorf("%w %q: run %s: %w", ErrStart, spec.Server, path, err)
	}
	p := &localProcess{
		server:     spec.Server,
		pid:        cmd.Process.Pid,
		cmd:        cmd,
		log:        log.With("pid", cmd.Process.Pid),
		stdinGrace: positiveOr(l.stdinGrace, DefaultStdinGrace),
		termGrace:  positiveOr(l.termGrace, DefaultTermGrace),
		stdin:      pipes.stdin,
		stdout:     pipes.stdout,
		stderr:     &stderrStream{file: pipes.stderr},
		release:    release,
		watchdog:   dog,
		exited:     make(chan struct{}),
		done:       make(chan struct{}),
	}
	p.log.Debug("started server process", "command", path)
	go p.reap()
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

// localProcess is a child started by Local. Its process group id equals
// its pid (Setpgid). The pid is only ever signalled while the leader is
// unreaped: until then the kernel cannot reuse it, so a group signal never
// reaches an unrelated process.
type localProcess struct {
	// fixed at start
	server     string
	pid        int
	cmd        *exec.Cmd
	log        hclog.Logger
	stdinGrace time.Duration
	termGrace  time.Duration
	stdin      *os.File
	stdout     *os.File
	stderr     *stderrStream
	release    func()    // hands the spawner reference back once the leader is reaped
	watchdog   *watchdog // nil where the kernel ends the group with the host (Pdeathsig)

	exited  chan struct{} // closed when the leader has exited (still a zombie, so its pid still names the group)
	done    chan struct{} // closed once the leader is reaped; waitErr is set before
	waitErr error

	closeOnce sync.Once
	closeErr  error

	// mu guards the fields below and is held while signalling, so that
	// reaping (which frees the pid) cannot slip between check and kill.
	mu         sync.Mutex
	reaped     bool
	termSentAt time.Time // first SIGTERM to the group; zero if none
	killSent   bool
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
	case <-p.done:
		return p.waitErr
	default:
	}
	select {
	case <-p.done:
		return p.waitErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Kill sends SIGKILL to the whole process group at once. It does not wait;
// Close (still needed to release the pipes) or Wait does.
func (p *localProcess) Kill() error {
	return p.signalGroup(syscall.SIGKILL)
}

// Close runs the shutdown sequence: close stdin, wait StdinGrace, SIGTERM
// the group, wait TermGrace, SIGKILL the group. It returns once the leader
// is reaped (the reaper has by then also ended the rest of the group), and
// closes stdout so a pending Read returns.
func (p *localProcess) Close() error {
	p.closeOnce.Do(func() { p.closeErr = p.shutdown() })
	return p.closeErr
}

func (p *localProcess) shutdown() error {
	var errs []error
	// EOF on stdin is how the MCP spec asks a stdio server to exit.
	if err := p.stdin.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		errs = append(errs, fmt.Errorf("close stdin of server %q: %w", p.server, err))
	}
	if !p.waitExited(p.stdinGrace) {
		p.log.Debug("server still running after stdin was closed; sending SIGTERM to its process group", "grace", p.stdinGrace)
		if err := p.signalGroup(syscall.SIGTERM); err != nil {
			errs = append(errs, err)
		}
		if !p.waitExited(p.termGrace) {
			p.log.Warn("server ignored SIGTERM; sending SIGKILL to its process group", "grace", p.termGrace)
			if err := p.signalGroup(syscall.SIGKILL); err != nil {
				errs = append(errs, err)
			}
		}
	}
	<-p.done
	if err := p.stdout.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		errs = append(errs, fmt.Errorf("close stdout of server %q: %w", p.server, err))
	}
	p.stderr.finish()
	return errors.Join(errs...)
}

// waitExited reports whether the leader exits within d.
func (p *localProcess) waitExited(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-p.exited:
		return true
	case <-timer.C:
		return false
	}
}

// signalGroup sends sig to the process group, unless the leader has been
// reaped (then the group id may already name someone else's group).
func (p *localProcess) signalGroup(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return nil
	}
	switch sig {
	case syscall.SIGTERM:
		if p.termSentAt.IsZero() {
			p.termSentAt = time.Now()
		}
	case syscall.SIGKILL:
		p.killSent = true
	}
	if err := syscall.Kill(-p.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("send %v to process group of server %q: %w", sig, p.server, err)
	}
	return nil
}

// reap is the one goroutine that waits for the leader. Where it can
// (Linux), it first waits without reaping, so the pid keeps naming the group
// while the rest of the group is ended, then reaps and publishes the exit
// status. Elsewhere it reaps the leader first: the group id stays reserved
// while any member lives (POSIX never hands out a pid equal to a live
// group's id), so signalling the group afterwards still reaches only it.
func (p *localProcess) reap() {
	defer p.release()
	if err := waitExitedKeepZombie(p.pid); err == nil {
		close(p.exited)
		p.endRestOfGroup()
		p.markReaped()
		p.setWaitErr(p.cmd.Wait())
	} else {
		if !errors.Is(err, errNoWaitInPlace) {
			p.log.Debug("could not wait for server without reaping it; ending its group after reaping", "error", err)
		}
		p.setWaitErr(p.cmd.Wait())
		close(p.exited)
		p.endRestOfGroup()
		p.markReaped()
	}
	// The group is gone: tell the watchdog, so it exits without killing.
	if err := p.watchdog.release(); err != nil {
		p.log.Warn("watchdog of server did not exit cleanly", "error", err)
	}
	p.log.Debug("server process exited", "status", p.cmd.ProcessState.String())
	close(p.done)
}

func (p *localProcess) setWaitErr(err error) {
	if err != nil {
		p.waitErr = fmt.Errorf("run server %q: %w", p.server, err)
	}
}

func (p *localProcess) markReaped() {
	p.mu.Lock()
	p.reaped = true
	p.mu.Unlock()
}

// endRestOfGroup ends the descendants still in the leader's process group
// once the leader has exited (on its own or by Close): SIGTERM, then
// SIGKILL if any remain after TermGrace (counted from the first SIGTERM).
func (p *localProcess) endRestOfGroup() {
	p.mu.Lock()
	killed := p.killSent
	p.mu.Unlock()
	if killed {
		return
	}
	remaining, err := groupHasOtherMembers(p.pid)
	if err == nil && !remaining {
		return
	}
	p.log.Debug("server exited but its process group has other members; sending SIGTERM")
	_ = p.signalGroup(syscall.SIGTERM)
	p.mu.Lock()
	deadline := p.termSentAt.Add(p.termGrace)
	p.mu.Unlock()
	// No kernel event tells us a group emptied, so poll with backoff.
	interval := time.Millisecond
	for time.Now().Before(deadline) {
		if remaining, err := groupHasOtherMembers(p.pid); err == nil && !remaining {
			return
		}
		timer := time.NewTimer(min(interval, time.Until(deadline)))
		<-timer.C
		interval = min(interval*2, 50*time.Millisecond)
	}
	if remaining, err := groupHasOtherMembers(p.pid); err == nil && !remaining {
		return
	}
	p.log.Warn("descendants of server ignored SIGTERM; sending SIGKILL to its process group", "grace", p.termGrace)
	if err := p.signalGroup(syscall.SIGKILL); err != nil {
		p.log.Warn("could not kill descendants of server", "error", err)
	}
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
