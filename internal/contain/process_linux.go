package contain

import (
	"errors"

	"golang.org/x/sys/unix"
)

// waitExitedKeepZombie blocks until pid (our child) exits, leaving it
// unreaped.
func waitExitedKeepZombie(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// groupHasOtherMembers reports whether a live process other than the
// leader (pid == pgid) belongs to process group pgid. Zombies do not
// count: they are dead, and one whose parent never reaps it would
// otherwise hold the stop for the whole grace.
func groupHasOtherMembers(pgid int) (bool, error) {
	procs := snapshot()
	if procs == nil {
		return false, errors.New("cannot read /proc")
	}
	for pid, info := range procs {
		if pid != pgid && info.pgrp == pgid && info.live() {
			return true, nil
		}
	}
	return false, nil
}
