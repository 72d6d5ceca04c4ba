package contain

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ownCgroupDir returns the directory of this process's cgroup in the
// cgroup2 hierarchy: the cgroup2 mount found in /proc/self/mountinfo
// joined with the "0::" path of /proc/self/cgroup, relative to the
// mount's root (a cgroup namespace or a bind mount may start deeper).
func ownCgroupDir() (string, error) {
	mountPoint, mountRoot, err := cgroup2Mount("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("read /proc/self/cgroup: %w", err)
	}
	path, ok := unifiedPath(data)
	if !ok {
		return "", errors.New("/proc/self/cgroup has no cgroup2 (0::) entry")
	}
	rel, ok := strings.CutPrefix(path, mountRoot)
	if !ok {
		return "", fmt.Errorf("own cgroup %q is outside the cgroup2 mount's root %q", path, mountRoot)
	}
	return filepath.Join(mountPoint, rel), nil
}

// cgroup2Mount finds the first cgroup2 mount in a mountinfo file and
// returns its mount point and the root of the hierarchy it shows.
func cgroup2Mount(mountinfo string) (point, root string, err error) {
	f, err := os.Open(mountinfo)
	if err != nil {
		return "", "", fmt.Errorf("read mountinfo: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if p, r, ok := parseMountinfoLine(sc.Text()); ok {
			return p, r, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", "", fmt.Errorf("read mountinfo: %w", err)
	}
	return "", "", errors.New("no cgroup2 file system is mounted")
}

// parseMountinfoLine reports a cgroup2 line of /proc/<pid>/mountinfo:
// "id parent major:minor root mountpoint options [optional...] - fstype source superoptions".
func parseMountinfoLine(line string) (point, root string, ok bool) {
	pre, post, found := strings.Cut(line, " - ")
	if !found {
		return "", "", false
	}
	after := strings.Fields(post)
	fields := strings.Fields(pre)
	if len(after) < 1 || after[0] != "cgroup2" || len(fields) < 5 {
		return "", "", false
	}
	return unescapeMountinfo(fields[4]), unescapeMountinfo(fields[3]), true
}

// unescapeMountinfo undoes the octal escapes (\040 for a space) the
// kernel writes in mountinfo paths.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unifiedPath returns the cgroup2 path from /proc/<pid>/cgroup ("0::/x").
func unifiedPath(data []byte) (string, bool) {
	for line := range strings.SplitSeq(string(data), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return p, true
		}
	}
	return "", false
}

// cgroupPids lists the processes in dir's cgroup.procs (live ones: an
// exited process leaves its cgroup even while it is a zombie).
func cgroupPids(dir string) ([]int, error) {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	var pids []int
	for f := range strings.FieldsSeq(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// killCgroup ends every process in dir and below: through cgroup.kill
// where the kernel has it (5.14+), otherwise by SIGKILL to every pid in
// cgroup.procs (of dir and its children), repeated by waitCgroupEmpty's
// caller until the cgroup is empty.
func killCgroup(dir string) error {
	err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
	switch {
	case err == nil:
		return nil
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("write cgroup.kill of %s: %w", dir, err)
	case !dirExists(dir):
		return nil // already removed: nothing left to kill
	}
	return signalCgroupTree(dir, syscall.SIGKILL)
}

func dirExists(dir string) bool {
	_, err := os.Stat(dir)
	return err == nil
}

// signalCgroupTree sends sig to every process in dir and its child
// cgroups (a plugin's cell holds the cells of the servers it started).
func signalCgroupTree(dir string, sig syscall.Signal) error {
	var errs []error
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		pids, err := cgroupPids(path)
		if err != nil {
			return nil
		}
		for _, pid := range pids {
			if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
				errs = append(errs, fmt.Errorf("send %v to pid %d: %w", sig, pid, err))
			}
		}
		return nil
	})
	return errors.Join(errs...)
}

// cgroupPopulated reads the "populated" key of dir's cgroup.events: 1
// while any live process is in dir or below.
func cgroupPopulated(f *os.File) (bool, error) {
	var buf [256]byte
	n, err := f.ReadAt(buf[:], 0)
	if n == 0 && err != nil {
		return false, err
	}
	for line := range bytes.SplitSeq(buf[:n], []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("populated ")); ok {
			return string(bytes.TrimSpace(v)) != "0", nil
		}
	}
	return false, errors.New("cgroup.events has no populated key")
}

// waitCgroupEmpty blocks until no live process is left in dir (or below)
// or timeout passes. The kernel signals every change of cgroup.events
// as POLLPRI, so this waits on an event, not on a timer. kill, when not
// nil, runs again on each wake-up (the fallback without cgroup.kill must
// catch processes forked after its last signal).
func waitCgroupEmpty(dir string, timeout time.Duration, kill func() error) error {
	f, err := os.Open(filepath.Join(dir, "cgroup.events"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("watch cgroup %s: %w", dir, err)
	}
	defer f.Close()
	deadline := time.Now().Add(timeout)
	for {
		populated, err := cgroupPopulated(f)
		if err != nil {
			return fmt.Errorf("watch cgroup %s: %w", dir, err)
		}
		if !populated {
			return nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			pids, _ := cgroupPids(dir)
			return fmt.Errorf("cgroup %s still holds processes %v after %v", dir, pids, timeout)
		}
		if kill != nil {
			_ = kill()
		}
		// Bounded slices keep the fallback's re-kill going on kernels
		// that do not notify cgroup.events.
		wait := min(left, 100*time.Millisecond)
		_, err = unix.Poll([]unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLPRI}}, int(wait/time.Millisecond)+1)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("watch cgroup %s: %w", dir, err)
		}
	}
}

// removeCgroup removes dir once its processes are gone, child cgroups
// first (a killed plugin leaves the cells of what it started behind); a
// cgroup that is already gone is fine.
func removeCgroup(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() {
			errs = append(errs, removeCgroup(filepath.Join(dir, e.Name())))
		}
	}
	if err := unix.Rmdir(dir); err != nil && !errors.Is(err, unix.ENOENT) {
		errs = append(errs, fmt.Errorf("remove cgroup %s: %w", dir, err))
	}
	return errors.Join(errs...)
}
