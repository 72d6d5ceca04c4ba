package launcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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
// Job Object). Signal targets the group as a whole (so an npx or uv
// wrapper's real server ends too) and, through the cell (on Linux a
// cgroup v2 under the plugin's own cgroup, or a descendant walk as child
// subreaper), what it started outside its group (setsid); on Windows
// either signal terminates the Job Object. When the process exits, the
// rest of its group and cell gets SIGTERM, two seconds, then SIGKILL, so
// nothing it started outlives it. It is a [Stopper]: when the host stops
// it, the stop sequence (close stdin, SIGTERM, SIGKILL, with the host's
// waits) runs here. internal/contain's Process does all of this, as it
// does for the host's own servers.
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
	proc, err := cell.Start(cmd, contain.StartOptions{CloseStdin: files[1].Close, ExitGrace: descendantGrace})
	if err != nil {
		closeAll()
		return nil, classifyStartError(err)
	}
	_ = files[0].Close()
	_ = files[3].Close()
	_ = files[5].Close()
	return &commandProcess{stdin: files[1], stdout: files[2], stderr: files[4], proc: proc}, nil
}

// descendantGrace is how long what an exited child left in its group and
// cell gets after SIGTERM before it is killed. It is well above the
// shim's outputDrainGrace, so a descendant that holds the child's output
// open never decides when the exit is reported: the drain does, even on
// a loaded machine (at 2 s against the drain's 1 s, the kill sometimes
// came first, and with it the EOF).
const descendantGrace = 5 * time.Second

// commandProcess is a child started by StartCommand: its pipes, and its
// contain.Process, which reaps it, signals its group and cell, and ends
// what it leaves behind.
type commandProcess struct {
	stdin, stdout, stderr *os.File
	proc                  *contain.Process
}

func (p *commandProcess) Stdin() io.WriteCloser { return p.stdin }
func (p *commandProcess) Stdout() io.Reader     { return p.stdout }
func (p *commandProcess) Stderr() io.Reader     { return p.stderr }
func (p *commandProcess) Pid() int              { return p.proc.Pid() }

func (p *commandProcess) Wait(ctx context.Context) error {
	select {
	case <-p.proc.Done():
	case <-ctx.Done():
		return ctx.Err()
	}
	err := p.proc.Err()
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		return exitErrorOf(xe)
	}
	return err
}

// Stop is internal/contain's one stop sequence: close stdin, stdinGrace,
// SIGTERM to the group and cell, termGrace, SIGKILL (Windows: terminate
// the Job Object after stdinGrace). It returns once the child is reaped.
func (p *commandProcess) Stop(ctx context.Context, stdinGrace, termGrace time.Duration) error {
	return p.proc.Stop(ctx, stdinGrace, termGrace)
}

// Signal signals the child's process group and what it started outside
// it (its cell); on Windows either signal terminates its Job Object.
func (p *commandProcess) Signal(sig Signal) error {
	if sig == SignalKill {
		return p.proc.Signal(contain.Kill)
	}
	return p.proc.Signal(contain.Term)
}
