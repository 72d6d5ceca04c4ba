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
)

// osProcess is the Unix part of a localProcess. Its process group id
// equals its pid (Setpgid). On Linux the pid is only ever signalled while
// the leader is unreaped: until then the kernel cannot reuse it, so a group
// signal never reaches an unrelated process.
type osProcess struct {
	release  func()    // hands the spawner reference back once the leader is reaped
	watchdog *watchdog // nil where the kernel ends the group with the host (Pdeathsig)

	// mu guards the fields below and is held while signalling, so that
	// reaping (which frees the pid) cannot slip between check and kill.
	mu         sync.Mutex
	reaped     bool
	termSentAt time.Time // first SIGTERM to the group; zero if none
	killSent   bool
}

func (l *Local) startOS(ctx context.Context, _ Spec, _ string, cmd *exec.Cmd) (*osProcess, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	release, dog, err := l.start(ctx, cmd)
	if err != nil {
		return nil, err
	}
	return &osProcess{release: release, watchdog: dog}, nil
}

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
