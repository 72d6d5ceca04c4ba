package launcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/contain"
)

// StartCommand starts cmd with its standard streams connected to pipes and
// returns it as a [Process], ready to be returned from [Launcher.Start].
// cmd.Stdin, cmd.Stdout and cmd.Stderr must be nil.
//
// The process gets a containment cell of its own (internal/contain, the
// same as the host's servers get): its own process group and, if the
// plugin dies, SIGKILL (Linux: Pdeathsig, tied to the forking thread,
// which the Go runtime keeps unless a goroutine exits while locked to it;
// macOS: the plugin's supervisor, see [RunSupervisorIfAsked]; Windows: a
// Job Object). On Linux Signal targets the group as a whole (so an npx or
// uv wrapper's real server ends too) and, through the cell (a cgroup v2
// under the plugin's own cgroup, or a descendant walk as child
// subreaper), what it started outside its group (setsid); when the
// process exits, the rest of its group gets SIGTERM, two seconds, then
// SIGKILL, so nothing it started outlives it. Elsewhere Signal targets
// the process only.
//
// Its stdio are *os.File pipes, so the shim can pass them to a host on
// the same machine (see [Process]).
//
// A start failure is a [*StartError] (not found, permission, other).
func StartCommand(cmd *exec.Cmd) (Process, error) {
	if cmd.Stdin != nil || cmd.Stdout != nil || cmd.Stderr != nil {
		return nil, errors.New("starting command: cmd.Stdin, cmd.Stdout and cmd.Stderr must be nil; StartCommand connects them")
	}
	// Our own pipes rather than cmd.StdoutPipe: exec closes those inside
	// Wait, which would drop output still in the pipe and race with reads.
	var files [6]*os.File // child stdin, our stdin, our stdout, child stdout, our stderr, child stderr
	var err error
	closeAll := func() {
		for _, f := range files {
			if f != nil {
				_ = f.Close()
			}
		}
	}
	if files[0], files[1], err = os.Pipe(); err == nil {
		if files[2], files[3], err = os.Pipe(); err == nil {
			files[4], files[5], err = os.Pipe()
		}
	}
	if err != nil {
		closeAll()
		return nil, &StartError{Kind: KindOther, Message: fmt.Sprintf("creating pipes: %v", err)}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = files[0], files[3], files[5]
	// A cell of its own (internal/contain: its process group, and on
	// Linux a cgroup or the subreaper's walk, on Windows a Job Object)
	// holds whatever the process starts, even what leaves its group. A
	// weaker cell still works, so its error is not fatal; the plugin
	// process is itself in the host's cell.
	cell, _ := contain.Default().NewCell(filepath.Base(cmd.Path))
	cell.Prepare(cmd)
	if err := cmd.Start(); err != nil {
		closeAll()
		_ = cell.Close()
		return nil, classifyStartError(err)
	}
	if err := cell.Started(cmd.Process.Pid); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		closeAll()
		_ = cell.Close()
		return nil, &StartError{Kind: KindOther, Message: err.Error()}
	}
	_ = files[0].Close()
	_ = files[3].Close()
	_ = files[5].Close()
	p := &commandProcess{
		cmd:    cmd,
		stdin:  files[1],
		stdout: files[2],
		stderr: files[4],
		cell:   cell,
		done:   make(chan struct{}),
	}
	go p.reap()
	return p, nil
}

// descendantGrace is how long what an exited child started gets to end
// after SIGTERM before it is killed.
const descendantGrace = 2 * time.Second

// commandProcess is a child started by StartCommand.
type commandProcess struct {
	// fixed at start
	cmd                   *exec.Cmd
	stdin, stdout, stderr *os.File

	cell    *contain.Cell
	done    chan struct{} // closed once the child is reaped; waitErr is set before
	waitErr error

	// mu is held while signalling and while marking the child reaped, so
	// that no signal can reach a reused pid (see reap).
	mu     sync.Mutex
	reaped bool
}

func (p *commandProcess) Stdin() io.WriteCloser { return p.stdin }
func (p *commandProcess) Stdout() io.Reader     { return p.stdout }
func (p *commandProcess) Stderr() io.Reader     { return p.stderr }
func (p *commandProcess) Pid() int              { return p.cmd.Process.Pid }

func (p *commandProcess) Wait(ctx context.Context) error {
	select {
	case <-p.done:
		return p.waitErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *commandProcess) Signal(sig Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return nil
	}
	return p.signalLocked(sig)
}

// reap is the one goroutine that waits for the child. Where it can, it
// first waits without reaping, so that the pid (and the process group id)
// cannot be reused while the rest of the group is told to end.
func (p *commandProcess) reap() {
	if waitExitedKeepZombie(p.cmd.Process.Pid) == nil {
		p.mu.Lock()
		p.endRestOfGroupLocked()
		p.reaped = true
		p.mu.Unlock()
	} else {
		p.mu.Lock()
		p.reaped = true
		p.mu.Unlock()
	}
	err := p.cmd.Wait()
	// What the child started gets the grace a process group gets after
	// SIGTERM; then whatever is left of its cell is killed.
	p.cell.WaitEmpty(descendantGrace)
	_ = p.cell.Close()
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		err = exitErrorOf(xe)
	}
	p.waitErr = err
	close(p.done)
}
