//go:build unix && !linux

package contain

import (
	"errors"
	"syscall"
)

// waitExitedKeepZombie is not available here (x/sys offers no waitid
// with WNOWAIT outside Linux); reap falls back to reaping the leader
// first.
func waitExitedKeepZombie(int) error { return errNoWaitInPlace }

// groupHasOtherMembers reports whether process group pgid still has a
// member. It is called once the leader is reaped, so any member is
// another process. Without /proc, kill(-pgid, 0) is the portable probe;
// it counts zombies too, which only lengthens a stop up to ExitGrace.
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
