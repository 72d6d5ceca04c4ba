package launch

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"

	"golang.org/x/sys/unix"
)

// start starts cmd from the spawner's locked thread (see spawner.go), so
// that the Pdeathsig its cell set fires only when the host dies.
func (l *Local) start(ctx context.Context, cmd *exec.Cmd) (release func(), err error) {
	return l.spawner.start(ctx, cmd)
}

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
// leader (pid == pgid) belongs to process group pgid. Zombies do not count:
// they are dead, and one whose parent never reaps it would otherwise hold
// the shutdown for the whole grace.
func groupHasOtherMembers(pgid int) (bool, error) {
	dir, err := os.Open("/proc")
	if err != nil {
		return false, err
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return false, err
	}
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == pgid {
			continue
		}
		stat, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		state, group, ok := parseStat(stat)
		if ok && group == pgid && state != 'Z' && state != 'X' {
			return true, nil
		}
	}
	return false, nil
}

// parseStat extracts the state and process group from /proc/<pid>/stat:
// "pid (comm) state ppid pgrp ...". comm may contain spaces and
// parentheses, so fields are counted after the last ')'.
func parseStat(stat []byte) (state byte, pgrp int, ok bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := bytes.Fields(stat[i+1:])
	if len(fields) < 3 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	pgrp, err := strconv.Atoi(string(fields[2]))
	if err != nil {
		return 0, 0, false
	}
	return fields[0][0], pgrp, true
}
