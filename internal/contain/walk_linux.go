package contain

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// procInfo is what the descendant walk needs of /proc/<pid>/stat.
type procInfo struct {
	state           byte
	ppid, pgrp, sid int
	start           uint64 // start time in clock ticks: with the pid, names a process for good
}

func (p procInfo) live() bool { return p.state != 'Z' && p.state != 'X' }

// parseProcStat reads "pid (comm) state ppid pgrp session tty tpgid flags
// minflt cminflt majflt cmajflt utime stime cutime cstime priority nice
// num_threads itrealvalue starttime ...". comm may hold spaces and
// parentheses, so fields are counted after the last ')'.
func parseProcStat(b []byte) (procInfo, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return procInfo{}, false
	}
	ppid, e1 := strconv.Atoi(string(f[1]))
	pgrp, e2 := strconv.Atoi(string(f[2]))
	sid, e3 := strconv.Atoi(string(f[3]))
	start, e4 := strconv.ParseUint(string(f[19]), 10, 64)
	if e1 != nil || e2 != nil || e3 != nil || e4 != nil {
		return procInfo{}, false
	}
	return procInfo{state: f[0][0], ppid: ppid, pgrp: pgrp, sid: sid, start: start}, true
}

func readProc(pid int) (procInfo, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	return parseProcStat(b)
}

// snapshot reads every process's stat.
func snapshot() map[int]procInfo {
	dir, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer dir.Close()
	names, _ := dir.Readdirnames(-1)
	procs := make(map[int]procInfo, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if info, ok := readProc(pid); ok {
			procs[pid] = info
		}
	}
	return procs
}

// family is what a walk has found so far: processes (by pid and start
// time) and the process groups and sessions they lead. It only grows, so
// a grandchild whose parent was killed after an earlier walk stays known.
type family struct {
	procs    map[int]uint64 // pid -> start time
	groups   map[int]bool
	sessions map[int]bool
}

func newFamily() *family {
	return &family{procs: map[int]uint64{}, groups: map[int]bool{}, sessions: map[int]bool{}}
}

// addGroup seeds the walk with a process group (the supervisor knows
// only the group ids of the servers it watches).
func (f *family) addGroup(pgid int) { f.groups[pgid] = true }

// addRoot seeds the walk with a process known by pid (the cell's leader,
// while unreaped).
func (f *family) addRoot(pid int) {
	if info, ok := readProc(pid); ok {
		f.add(pid, info)
	}
}

func (f *family) add(pid int, info procInfo) {
	f.procs[pid] = info.start
	if info.pgrp == pid {
		f.groups[pid] = true
	}
	if info.sid == pid {
		f.sessions[pid] = true
	}
}

// walk adds, until nothing new appears, every process whose parent is in
// the family or whose process group or session a member leads (or led),
// and returns the family's live members. A known pid whose start time
// changed is a different process and is dropped.
func (f *family) walk() []int {
	procs := snapshot()
	for pid, start := range f.procs {
		if info, ok := procs[pid]; !ok || info.start != start {
			delete(f.procs, pid)
		}
	}
	for changed := true; changed; {
		changed = false
		for pid, info := range procs {
			if _, in := f.procs[pid]; in {
				continue
			}
			_, parentIn := f.procs[info.ppid]
			if parentIn || f.groups[info.pgrp] || f.sessions[info.sid] {
				f.add(pid, info)
				changed = true
			}
		}
	}
	var live []int
	for pid := range f.procs {
		if procs[pid].live() {
			live = append(live, pid)
		}
	}
	return live
}

// signal sends sig to every live member a fresh walk finds, except skip.
func (f *family) signal(sig syscall.Signal, skip int) ([]int, error) {
	var errs []error
	var sent []int
	for _, pid := range f.walk() {
		if pid == skip {
			continue
		}
		if info, ok := readProc(pid); !ok || info.start != f.procs[pid] {
			continue // gone since the walk: never signal a reused pid
		}
		if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, err)
			continue
		}
		sent = append(sent, pid)
	}
	return sent, errors.Join(errs...)
}

// reapAdopted reaps members that are zombies and children of this
// process: orphans the subreaper adopted. skip is the owner's own child,
// which its owner reaps.
func (f *family) reapAdopted(skip int) {
	self := os.Getpid()
	for pid, start := range f.procs {
		if pid == skip {
			continue
		}
		info, ok := readProc(pid)
		if !ok || info.start != start || info.ppid != self || info.live() {
			continue
		}
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	}
}

// nothingLeft reports, without walking /proc, that nothing of a
// subreaper cell but its exited leader can be alive. When the leader has
// exited, every live descendant it had hangs below a child of this
// process: its own children were re-parented to us (the subreaper) as it
// exited, and so is any orphan further down. So if every child of this
// process is a leader of a cell or the supervisor, the cell is empty.
// A leader still alive keeps its children, so then it says false, as it
// does whenever it cannot tell: the walk decides. Costs one read of the
// leader's stat and one per thread of this process, where a walk reads
// every process's: a hook command's call is a few times cheaper for it.
// c.mu is held.
func (c *Cell) nothingLeft() bool {
	if c.kind != KindSubreaper || c.leader == 0 {
		return false
	}
	if info, ok := readProc(c.leader); ok && info.live() {
		return false
	}
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	return c.m.adoptedNoneLocked()
}

// adoptedNoneLocked reports whether every live child of this process is
// a cell's leader or the supervisor, from /proc/self/task/*/children (the
// kernel lists a child under the thread that is its parent). Any error,
// a kernel without the children files say, is "not known": false.
// m.mu is held.
func (m *Manager) adoptedNoneLocked() bool {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return false
	}
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				if _, statErr := os.Stat("/proc/self/task/" + t.Name()); statErr != nil {
					continue // the thread ended since the listing
				}
			}
			return false
		}
		for _, f := range strings.Fields(string(b)) {
			pid, err := strconv.Atoi(f)
			if err != nil {
				return false
			}
			if m.leaders[pid] || (m.sup != nil && m.sup.cmd.Process != nil && m.sup.cmd.Process.Pid == pid) {
				continue
			}
			// A zombie has no live descendants of its own (they were
			// re-parented here and are listed themselves): someone else
			// here, another cell's walk, reaps it.
			if info, ok := readProc(pid); ok && !info.live() {
				continue
			}
			return false
		}
	}
	return true
}
