package contain

import (
	"errors"
	"os"
	"os/exec"
)

// osState is the Windows part of a Process: nothing beyond the cell's
// Job Object.
type osState struct{}

func killUncontained(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

// Signal terminates every process in the child's job, whichever signal:
// Windows has no signal a console-less child could handle.
func (p *Process) Signal(Signal) error {
	if err := p.cell.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

// reap waits for the leader, then ends whatever it left in its job (an
// npx wrapper's real server, say): there is no signal to ask them first,
// and they were the leader's to end.
func (p *Process) reap() {
	defer p.release()
	p.waitErr = p.cmd.Wait()
	close(p.exited)
	p.cellErr = p.cell.Close()
	p.finish()
}
