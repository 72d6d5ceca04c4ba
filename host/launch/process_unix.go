//go:build unix

package launch

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/internal/contain"
)

// osProcess is the Unix part of a localProcess. Its process group id
// equals its pid (the cell gives it its own group). On Linux the pid is
// only ever signalled while the leader is unreaped: until then the kernel
// cannot reuse it, so a group signal never reaches an unrelated process.
type osProcess struct {
	release func() // hands the spawner reference back once the leader is reaped
	// cell holds the server and everything it starts, even what leaves
	// the group (Linux: a cgroup, or the subreaper's descendant walk),
	// and has the supervisor end it if the host dies (macOS: the process
	// group); see internal/contain.
	cell *contain.Cell

	// mu guards the fields below and is held while signalling, so that
	// reaping (which frees the pid) cannot slip between check and kill.
	mu         sync.Mutex
	reaped     bool
	termSentAt time.Time // first SIGTERM to the group; zero if none
	killSent   bool
}

func (l *Local) startOS(ctx context.Context, spec Spec, _ string, cmd *exec.Cmd) (*osProcess, error) {
	cell, err := l.containment().NewCell(spec.Server)
	if err != nil {
		l.logger().Warn("server runs with weaker containment", "server", spec.Server, "error", err)
	}
	cell.Prepare(cmd)
	release, err := l.start(ctx, cmd)
	if err != nil {
		_ = cell.Close()
		return nil, err
	}
	if err := cell.Started(cmd.Process.Pid); err != nil {
		// Not contained: a server that could outlive the host must not run.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		release()
		_ = cell.Close()
		return nil, err
	}
	return &osProcess{release: release, cell: cell}, nil
}

// errNoWaitInPlace says the OS cannot wait for a child without reaping it.
var errNoWaitInPlace = errors.New("waiting without reaping is not supported on this OS")

// do carries out one step of the shutdown plan.
func (p *localProcess) do(a shutdownAction) error {
	switch a {
	case closeStdin:
		return p.closeStdin()
	case termGroup:
		return p.signalGroup(syscall.SIGTERM)
	case killGroup:
		return p.signalGroup(syscall.SIGKILL)
	default:
		return fmt.Errorf("shutdown step %v is not available on Unix", a)
	}
}

// Kill sends SIGKILL to the whole process group at once. It does not wait;
// Close (still needed to release the pipes) or Wait does.
func (p *localProcess) Kill() error {
	return p.signalGroup(syscall.SIGKILL)
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
	// Descendants that left the group (setsid) get the same signal, first:
	// the subreaper's walk follows parent links, which the group's
	// signal would cut.
	var errs []error
	if err := p.cell.SignalOthers(sig); err != nil {
		errs = append(errs, fmt.Errorf("send %v to the processes server %q started: %w", sig, p.server, err))
	}
	if err := syscall.Kill(-p.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		errs = append(errs, fmt.Errorf("send %v to process group of server %q: %w", sig, p.server, err))
	}
	return errors.Join(errs...)
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
	// Whatever is still in the cell (it ignored the signals, or it left
	// the group and the walk of endRestOfGroup) ends now; the cgroup goes,
	// and the supervisor forgets the cell.
	if err := p.cell.Close(); err != nil {
		p.log.Warn("could not end every process the server started", "error", err)
	}
	p.log.Debug("server process exited", "status", p.cmd.ProcessState.String())
	close(p.done)
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
	remaining, err := p.othersAlive()
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
		if remaining, err := p.othersAlive(); err == nil && !remaining {
			return
		}
		timer := time.NewTimer(min(interval, time.Until(deadline)))
		<-timer.C
		interval = min(interval*2, 50*time.Millisecond)
	}
	if remaining, err := p.othersAlive(); err == nil && !remaining {
		return
	}
	p.log.Warn("descendants of server ignored SIGTERM; sending SIGKILL to its process group", "grace", p.termGrace)
	if err := p.signalGroup(syscall.SIGKILL); err != nil {
		p.log.Warn("could not kill descendants of server", "error", err)
	}
}

// othersAlive reports whether anything but the leader is still running:
// a member of its group, or a process of its cell.
func (p *localProcess) othersAlive() (bool, error) {
	remaining, err := groupHasOtherMembers(p.pid)
	if err != nil || remaining {
		return remaining, err
	}
	return p.cell.Others(), nil
}
