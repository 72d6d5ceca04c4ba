//go:build unix || windows

package contain

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"time"
)

// StartOptions says how [Cell.Start] starts a child and how its
// [Process] ends it.
type StartOptions struct {
	// Start starts cmd and returns a release func called once the child
	// has been reaped; nil means cmd.Start. host/launch passes its
	// spawner, which forks from a locked thread so that Linux's
	// Pdeathsig (set by Prepare) fires only when the host dies.
	Start func(*exec.Cmd) (release func(), err error)
	// CloseStdin closes the owner's end of the child's stdin: the first
	// step of [Process.Stop] (EOF is how MCP asks a stdio server to
	// exit). nil skips that step.
	CloseStdin func() error
	// ExitGrace is how long the rest of the group and cell get after
	// SIGTERM, counted from the first one, before SIGKILL, when the
	// leader exits (on its own or in Stop). Zero means 2 s.
	ExitGrace time.Duration
	// KillRest, for short-lived commands (hook programs) whose
	// descendants have no business outliving them: when the leader
	// exits, whatever it left in its group and cell is SIGKILLed at once,
	// without SIGTERM, ExitGrace or the probe of what is left (on Linux a
	// scan of /proc, which costs more than such a command's own start).
	KillRest bool
	// OnEscalate, if set, is told each step Stop takes after the first,
	// and how long the child had after the previous one: contain does not
	// log, its owner does.
	OnEscalate func(step Step, after time.Duration)
	// OnExit, if set, is called by the reaper once the leader is reaped
	// and the cell closed, before Done closes (so what it logs is logged
	// when Stop returns), with the leader's state and [Process.CellErr].
	OnExit func(state *os.ProcessState, cellErr error)
}

// defaultExitGrace is ExitGrace's default.
const defaultExitGrace = 2 * time.Second

// Step is one step of ending a child.
type Step int

const (
	// StepCloseStdin: EOF on the child's stdin.
	StepCloseStdin Step = iota
	// StepTerm: SIGTERM to the process group and the rest of the cell (Unix).
	StepTerm
	// StepKill: SIGKILL to the group and the cell (Unix), or terminate
	// the Job Object (Windows). It cannot be refused: Stop waits no
	// longer than the reaping after it.
	StepKill
)

func (s Step) String() string {
	switch s {
	case StepCloseStdin:
		return "close stdin"
	case StepTerm:
		return "SIGTERM to the process group and cell"
	case StepKill:
		return "kill the process group and cell"
	}
	return "unknown"
}

// plannedStep is a step and how long to wait for the leader to exit
// before the next one.
type plannedStep struct {
	step  Step
	grace time.Duration
}

// stopPlan is the order in which Stop ends a child on goos: close
// stdin, SIGTERM, SIGKILL on Unix; Windows has no signal a console-less
// child could handle, so after stdin's grace the job is terminated.
func stopPlan(goos string, stdinGrace, termGrace time.Duration) []plannedStep {
	if goos == "windows" {
		return []plannedStep{{StepCloseStdin, stdinGrace}, {StepKill, 0}}
	}
	return []plannedStep{{StepCloseStdin, stdinGrace}, {StepTerm, termGrace}, {StepKill, 0}}
}

// Start starts cmd in the cell: Prepare, the start, Started. If the
// child cannot be contained it is killed and reaped and the cell closed;
// a start error is returned as the OS gave it, for the owner to classify.
// From here on the returned [Process] owns the child: one goroutine
// reaps it, ends what it left (see [StartOptions.ExitGrace]) and closes
// the cell.
func (c *Cell) Start(cmd *exec.Cmd, opts StartOptions) (*Process, error) {
	c.Prepare(cmd)
	start := opts.Start
	if start == nil {
		start = func(cmd *exec.Cmd) (func(), error) { return func() {}, cmd.Start() }
	}
	release, err := start(cmd)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	if err := c.Started(cmd.Process.Pid); err != nil {
		// Not contained: a child that could outlive its owner must not run.
		killUncontained(cmd)
		_ = cmd.Wait()
		release()
		_ = c.Close()
		return nil, err
	}
	p := &Process{
		cell:       c,
		cmd:        cmd,
		pid:        cmd.Process.Pid,
		release:    release,
		closeStdin: opts.CloseStdin,
		exitGrace:  opts.ExitGrace,
		killRest:   opts.KillRest,
		onEscalate: opts.OnEscalate,
		onExit:     opts.OnExit,
		exited:     make(chan struct{}),
		done:       make(chan struct{}),
	}
	if p.exitGrace <= 0 {
		p.exitGrace = defaultExitGrace
	}
	go p.reap()
	return p, nil
}

// Process is a child started by [Cell.Start]. Its methods are safe for
// concurrent use.
type Process struct {
	cell       *Cell
	cmd        *exec.Cmd
	pid        int
	release    func()
	closeStdin func() error
	exitGrace  time.Duration
	killRest   bool
	onEscalate func(Step, time.Duration)
	onExit     func(*os.ProcessState, error)

	exited  chan struct{} // the leader has exited (on Linux still a zombie, so its pid still names the group)
	done    chan struct{} // the leader is reaped and the cell closed; waitErr and cellErr are set
	waitErr error
	cellErr error

	osState
}

// Pid is the child's process id.
func (p *Process) Pid() int { return p.pid }

// Exited is closed once the leader has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Done is closed once the leader is reaped and whatever it left in its
// group and cell has been ended.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is cmd.Wait's error (nil for exit status 0); valid after Done.
func (p *Process) Err() error { return p.waitErr }

// CellErr says why not every process the child started could be ended
// (nil if all were); valid after Done.
func (p *Process) CellErr() error { return p.cellErr }

// State is the leader's exit state; valid after Done.
func (p *Process) State() *os.ProcessState { return p.cmd.ProcessState }

// Stop ends the child: close its stdin, wait stdinGrace for the leader
// to exit, SIGTERM the group and cell (Unix), wait termGrace, kill the
// group and cell (Windows: terminate the job after stdin's grace). ctx
// ending skips the remaining graces and kills at once. Stop returns once
// the leader is reaped and the cell closed; it may be called again (it
// then only waits).
func (p *Process) Stop(ctx context.Context, stdinGrace, termGrace time.Duration) error {
	err := Escalate(ctx, p.exited, p.do, stdinGrace, termGrace, p.onEscalate)
	<-p.done
	return err
}

// Escalate is the one stop sequence, said once: [Process.Stop] runs it on
// a contained child, and the launcher SDK on a plugin's process that is
// not one (a remote executor's, say). It takes each step with take (close
// stdin, then, while exited stays open, StepTerm after stdinGrace and
// StepKill after termGrace; Windows: StepKill after stdinGrace), tells
// onEscalate (if set) each step after the first and how long the child
// had, and returns once exited closes or StepKill was taken, without
// waiting for the reaping. ctx ending turns the next step into StepKill.
// The errors of the steps are joined.
func Escalate(ctx context.Context, exited <-chan struct{}, take func(Step) error,
	stdinGrace, termGrace time.Duration, onEscalate func(Step, time.Duration),
) error {
	var errs []error
	plan := stopPlan(runtime.GOOS, stdinGrace, termGrace)
	for i, s := range plan {
		step := s.step
		if ctx.Err() != nil {
			step = StepKill
		}
		if i > 0 && onEscalate != nil {
			onEscalate(step, plan[i-1].grace)
		}
		if err := take(step); err != nil {
			errs = append(errs, err)
		}
		if step == StepKill || waitExited(ctx, exited, s.grace) {
			break
		}
	}
	return errors.Join(errs...)
}

func (p *Process) do(step Step) error {
	switch step {
	case StepCloseStdin:
		if p.closeStdin == nil {
			return nil
		}
		if err := p.closeStdin(); err != nil && !errors.Is(err, os.ErrClosed) {
			return err
		}
		return nil
	case StepTerm:
		return p.Signal(Term)
	default:
		return p.Signal(Kill)
	}
}

// waitExited reports whether exited closes within d (false at once if
// ctx ends).
func waitExited(ctx context.Context, exited <-chan struct{}, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-exited:
		return true
	case <-timer.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// finish runs once the leader is reaped and the cell closed.
func (p *Process) finish() {
	if p.onExit != nil {
		p.onExit(p.cmd.ProcessState, p.cellErr)
	}
	close(p.done)
}

// Kill ends the child and everything in its cell at once. It does not
// wait; Stop or Done does.
func (p *Process) Kill() error { return p.Signal(Kill) }

// Signal is a request to end a child.
type Signal int

const (
	// Term asks the group and cell to exit (SIGTERM; on Windows, which
	// has no such signal, the job is terminated).
	Term Signal = iota
	// Kill ends the group and cell at once.
	Kill
)

// reapState is what the Unix reaper and Signal share.
type reapState struct {
	mu         sync.Mutex
	reaped     bool
	termSentAt time.Time
	killSent   bool
}
