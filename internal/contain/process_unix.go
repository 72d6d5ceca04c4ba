//go:build unix

package contain

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// osState is the Unix part of a Process. Its process group id equals its
// pid (Prepare gives it its own group). mu is held while signalling, so
// that reaping (which frees the pid) cannot slip between check and kill.
type osState struct{ reapState }

// errNoWaitInPlace says the OS cannot wait for a child without reaping it.
var errNoWaitInPlace = errors.New("waiting without reaping is not supported on this OS")

func killUncontained(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

// Signal sends SIGTERM or SIGKILL to the child's process group and to the
// processes of its cell outside the group (setsid descendants), unless
// the leader has been reaped (then the group id may name someone else's
// group; the cell's Close ends what is left). Signalling a child that has
// exited is not an error.
func (p *Process) Signal(s Signal) error {
	sig := syscall.SIGTERM
	if s == Kill {
		sig = syscall.SIGKILL
	}
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
	// The cell first: the subreaper's walk follows parent links, which
	// the group's signal would cut.
	var errs []error
	if err := p.cell.SignalOthers(sig); err != nil {
		errs = append(errs, fmt.Errorf("send %v to the processes it started: %w", sig, err))
	}
	if err := syscall.Kill(-p.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		errs = append(errs, fmt.Errorf("send %v to its process group: %w", sig, err))
	}
	return errors.Join(errs...)
}

// reap is the one goroutine that waits for the leader. Where it can
// (Linux), it first waits without reaping, so the pid keeps naming the
// group while the rest of the group is ended, then reaps. Elsewhere it
// reaps the leader first: the group id stays reserved while any member
// lives (POSIX never hands out a pid equal to a live group's id), so
// signalling the group afterwards still reaches only it.
func (p *Process) reap() {
	defer p.release()
	if err := waitExitedKeepZombie(p.pid); err == nil {
		close(p.exited)
		p.endRest()
		p.markReaped()
		p.waitErr = p.cmd.Wait()
	} else {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
		p.endRest()
		p.markReaped()
	}
	// Whatever is still in the cell (it ignored the signals, or it left
	// the group) ends now; the cgroup goes, and the supervisor forgets
	// the cell.
	p.cellErr = p.cell.Close()
	p.finish()
}

func (p *Process) markReaped() {
	p.mu.Lock()
	p.reaped = true
	p.mu.Unlock()
}

// endRest ends what the exited leader left in its group and cell:
// SIGTERM, then SIGKILL if any remain ExitGrace after the first SIGTERM
// (with KillRest, SIGKILL at once).
func (p *Process) endRest() {
	p.mu.Lock()
	killed := p.killSent
	p.mu.Unlock()
	if killed {
		return
	}
	if p.killRest {
		_ = p.Signal(Kill)
		return
	}
	if !p.othersAlive() {
		return
	}
	_ = p.Signal(Term)
	p.mu.Lock()
	deadline := p.termSentAt.Add(p.exitGrace)
	p.mu.Unlock()
	// No kernel event tells us a group emptied, so poll with backoff.
	interval := time.Millisecond
	for time.Now().Before(deadline) {
		if !p.othersAlive() {
			return
		}
		timer := time.NewTimer(min(interval, time.Until(deadline)))
		<-timer.C
		interval = min(interval*2, 50*time.Millisecond)
	}
	if !p.othersAlive() {
		return
	}
	if p.onEscalate != nil {
		p.onEscalate(StepKill, p.exitGrace)
	}
	_ = p.Signal(Kill)
}

// othersAlive reports whether anything but the leader still runs: a
// member of its group, or a process of its cell. A failed probe counts
// as alive (the grace then runs out and SIGKILL follows).
func (p *Process) othersAlive() bool {
	remaining, err := groupHasOtherMembers(p.pid)
	if err != nil || remaining {
		return true
	}
	return p.cell.Others()
}
