//go:build unix && !linux

package launch

import (
	"context"
	"errors"
	"os/exec"
	"syscall"
)

// start starts cmd. This OS has no Pdeathsig: the cell registers the
// process group with the supervisor, which kills it if the host dies.
func (l *Local) start(_ context.Context, cmd *exec.Cmd) (release func(), err error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return func() {}, nil
}

// waitExitedKeepZombie is not available here (x/sys offers no waitid with
// WNOWAIT outside Linux); reap falls back to reaping the leader first.
func waitExitedKeepZombie(int) error { return errNoWaitInPlace }

// groupHasOtherMembers reports whether process group pgid still has a
// member. It is called once the leader is reaped, so any member is another
// process. Without /proc, kill(-pgid, 0) is the portable probe; it counts
// zombies too, which only lengthens a shutdown up to TermGrace.
func groupHasOtherMembers(pgid int) (bool, error) {
	err := syscall.Kill(-pgid, 0)
	switch {
	case err == nil, errors.Is(err, syscall.EPERM):
		return true, nil
	case errors.Is(err, syscall.ESRCH):
		return false, nil
	default:
		return false, err
	}
}
