package contain

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// stopTimeout bounds how long Close waits for a killed cell to empty.
// SIGKILL cannot be refused, so only a process stuck in the kernel (an
// uninterruptible read on a dead NFS server, say) can use it up.
const stopTimeout = 5 * time.Second

var (
	defaultOnce sync.Once
	defaultMgr  *Manager
)

// Default returns the process-wide manager. The containment choice is
// made on first use and kept: a subreaper cannot be undone, and a process
// should not mix containments.
func Default() *Manager {
	defaultOnce.Do(func() { defaultMgr = newManager(os.Getenv(ModeEnv)) })
	return defaultMgr
}

// Manager creates the cells of one process and runs the supervisor while
// any cell is registered. It is safe for concurrent use.
type Manager struct {
	mu      sync.Mutex
	decided bool
	kind    Kind
	reason  error  // why not KindCgroup, when it is not
	base    string // this process's own cgroup directory (cgroup kind)
	root    string // base/toolgate-<pid> while any cell exists; "" otherwise
	clone3  bool   // the kernel starts processes straight into a cgroup
	seq     int
	cells   int
	sup     *supervisorConn
	forced  bool
	// leaders are the pids of the subreaper cells' leaders not yet
	// closed: the children this process has of its own accord, as
	// opposed to orphans it adopted (see adoptedNone).
	leaders map[int]bool
}

func newManager(mode string) *Manager {
	if mode == string(KindProcessGroup) {
		return &Manager{decided: true, kind: KindProcessGroup, reason: errors.New("containment limited to the process group")}
	}
	return &Manager{forced: mode == string(KindSubreaper)}
}

// NewManager returns a manager of its own rather than the process-wide
// one, for benchmarks that compare containments in one run: kind is
// KindSubreaper (forces the fallback; the process stays a subreaper),
// KindProcessGroup (cells hold nothing: the baseline) or "" (the best
// available).
func NewManager(kind Kind) *Manager { return newManager(string(kind)) }

// Kind reports the containment the manager's cells use, deciding it if
// no cell has been made yet, and why it is not a cgroup (nil if it is).
func (m *Manager) Kind() (Kind, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.decideLocked()
	return m.kind, m.reason
}

// decideLocked picks cgroups if this process may create one under its
// own cgroup, the subreaper fallback otherwise.
func (m *Manager) decideLocked() {
	if m.decided {
		return
	}
	m.decided = true
	var err error
	if m.forced {
		err = fmt.Errorf("cgroups disabled by %s=%s", ModeEnv, KindSubreaper)
	} else if m.base, err = ownCgroupDir(); err == nil {
		err = m.makeRootLocked()
		if err == nil {
			m.clone3 = probeClone3(m.root)
			m.kind = KindCgroup
			if m.cells == 0 && removeCgroup(m.root) == nil {
				m.root = "" // made again by the first cell
			}
			return
		}
	}
	m.reason = err
	m.kind = KindSubreaper
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		m.reason = errors.Join(m.reason, fmt.Errorf("become child subreaper: %w", err))
	}
}

// makeRootLocked creates base/toolgate-<pid>, the parent of this
// process's cells.
func (m *Manager) makeRootLocked() error {
	if m.root != "" {
		return nil
	}
	root := filepath.Join(m.base, "toolgate-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(root, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("create cgroup under %s: %w", m.base, err)
	}
	if _, err := os.Stat(filepath.Join(root, "cgroup.procs")); err != nil {
		_ = removeCgroup(root)
		return fmt.Errorf("cgroup %s is not usable: %w", root, err)
	}
	m.root = root
	return nil
}

// probeClone3 starts this binary as a probe (it exits at once, see
// RunSupervisorIfAsked) straight into dir; a binary that does not call
// that entry point is never probed. Seccomp profiles (Docker's default) and kernels
// before 5.7 refuse clone3's CLONE_INTO_CGROUP; cells then move the child
// in by writing cgroup.procs right after it starts.
func probeClone3(dir string) bool {
	if !supervisable.Load() {
		return false // the binary would not recognise the probe role
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{"toolgate-contain-probe"}
	cmd.Env = []string{roleEnv + "=probe"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return false
	}
	_ = cmd.Wait()
	return true
}

// Cell is one contained child and everything it starts. Create it with
// [Manager.NewCell] before starting the child, pass the child's
// SysProcAttr to Prepare, report the pid to Started, and Close it once
// the child has been reaped (or its start failed).
type Cell struct {
	m    *Manager
	kind Kind
	dir  string // cgroup directory (KindCgroup)
	fd   int    // O_PATH descriptor of dir for clone3, -1 if none

	mu       sync.Mutex
	leader   int
	intoCg   bool // the child was started straight into dir
	fam      *family
	regLine  string // the supervisor registration, "" if none
	closed   bool
	closeErr error
}

// NewCell creates a cell named after name (a server's or plugin's name).
// A cgroup that cannot be made degrades the cell to the process group
// (KindProcessGroup) and the error says why; the cell is usable anyway.
func (m *Manager) NewCell(name string) (*Cell, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.decideLocked()
	c := &Cell{m: m, kind: m.kind, fd: -1}
	m.cells++
	if m.kind == KindSubreaper {
		c.fam = newFamily()
		return c, nil
	}
	err := m.makeRootLocked()
	if err == nil {
		m.seq++
		c.dir = filepath.Join(m.root, cellName(name)+"-"+strconv.Itoa(m.seq))
		err = os.Mkdir(c.dir, 0o755)
	}
	if err == nil {
		err = m.registerLocked("c " + c.dir)
	}
	if err != nil {
		if c.dir != "" {
			_ = removeCgroup(c.dir)
		}
		c.dir = ""
		c.kind = KindProcessGroup
		return c, fmt.Errorf("contain %q in a cgroup: %w; it is contained by its process group only", name, err)
	}
	c.regLine = "c " + c.dir
	if m.clone3 {
		if fd, err := unix.Open(c.dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
			c.fd = fd
		}
	}
	return c, nil
}

// Kind is the containment this cell uses.
func (c *Cell) Kind() Kind { return c.kind }

// Prepare sets up cmd to be started into the cell, right before it is
// started: a process group of its own, SIGKILL when the thread that
// starts it ends (Pdeathsig; the caller chooses that thread, see
// host/launch's spawner), and the cell's cgroup from the first
// instruction (clone3), where the kernel allows.
func (c *Cell) Prepare(cmd *exec.Cmd) {
	attr := sysProcAttr(cmd)
	attr.Setpgid = true
	attr.Pdeathsig = syscall.SIGKILL
	if c.fd >= 0 {
		attr.UseCgroupFD = true
		attr.CgroupFD = c.fd
		c.intoCg = true
	}
}

// Started records the child's pid. Where the kernel could not start the
// child in its cgroup, it moves it there now; in the subreaper fallback
// it registers the child's process group with the supervisor. An error
// means the child is not contained: the caller should kill it.
func (c *Cell) Started(pid int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.leader = pid
	if c.fd >= 0 {
		_ = unix.Close(c.fd)
		c.fd = -1
	}
	switch c.kind {
	case KindCgroup:
		if !c.intoCg {
			if err := os.WriteFile(filepath.Join(c.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
				return fmt.Errorf("move pid %d into cgroup %s: %w", pid, c.dir, err)
			}
		}
	case KindSubreaper:
		c.fam.addRoot(pid)
		c.m.mu.Lock()
		if c.m.leaders == nil {
			c.m.leaders = map[int]bool{}
		}
		c.m.leaders[pid] = true
		c.m.mu.Unlock()
		if info, ok := readProc(pid); ok && info.pgrp == pid {
			c.m.mu.Lock()
			err := c.m.registerLocked("g " + strconv.Itoa(pid))
			c.m.mu.Unlock()
			if err == nil {
				c.regLine = "g " + strconv.Itoa(pid)
			}
		}
	}
	return nil
}

// Others reports whether a live process other than the leader is in the
// cell.
func (c *Cell) Others() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.othersLocked()) > 0
}

func (c *Cell) othersLocked() []int {
	var pids []int
	switch c.kind {
	case KindCgroup:
		all, _ := cgroupPids(c.dir)
		for _, pid := range all {
			if pid != c.leader {
				pids = append(pids, pid)
			}
		}
	case KindSubreaper:
		if c.nothingLeft() {
			return nil
		}
		for _, pid := range c.fam.walk() {
			if pid != c.leader {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// SignalOthers sends sig to every live process of the cell except the
// leader (whose owner signals it, knowing whether it is reaped).
func (c *Cell) SignalOthers(sig syscall.Signal) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	switch c.kind {
	case KindCgroup:
		var errs []error
		for _, pid := range c.othersLocked() {
			if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	case KindSubreaper:
		if c.nothingLeft() {
			return nil
		}
		_, err := c.fam.signal(sig, c.leader)
		return err
	}
	return nil
}

// WaitEmpty waits up to d for every process of the cell but an exited
// leader to be gone (after SIGTERM, say) and reports whether they are.
func (c *Cell) WaitEmpty(d time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return true
	}
	switch c.kind {
	case KindCgroup:
		return waitCgroupEmpty(c.dir, d, nil) == nil
	case KindSubreaper:
		deadline := time.Now().Add(d)
		for {
			others := c.othersLocked()
			if len(others) == 0 {
				return true
			}
			if time.Now().After(deadline) {
				return false
			}
			waitGone(others, time.Until(deadline))
		}
	}
	return true
}

// Kill ends every process in the cell at once, the leader included, and
// waits (bounded) until they are gone. The cell stays usable for Close.
func (c *Cell) Kill() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	return c.killLocked()
}

func (c *Cell) killLocked() error {
	switch c.kind {
	case KindCgroup:
		if err := killCgroup(c.dir); err != nil {
			return err
		}
		return waitCgroupEmpty(c.dir, stopTimeout, func() error { return killCgroup(c.dir) })
	case KindSubreaper:
		deadline := time.Now().Add(stopTimeout)
		for {
			if c.nothingLeft() {
				return nil
			}
			// The leader is killed too: Close runs after it is reaped,
			// and a reaped leader is no longer in the walk.
			sent, err := c.fam.signal(syscall.SIGKILL, 0)
			if len(sent) == 0 {
				c.fam.reapAdopted(c.leader)
				return err
			}
			waitGone(sent, time.Until(deadline))
			c.fam.reapAdopted(c.leader)
			if time.Now().After(deadline) {
				return fmt.Errorf("processes %v still alive %v after SIGKILL", sent, stopTimeout)
			}
		}
	}
	return nil
}

// Close kills whatever is left in the cell, waits for it, removes the
// cgroup and unregisters the cell from the supervisor. Call it after the
// leader has been reaped; it is idempotent.
func (c *Cell) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.closeErr
	}
	c.closed = true
	if c.fd >= 0 {
		_ = unix.Close(c.fd)
		c.fd = -1
	}
	err := c.killLocked()
	if c.kind == KindCgroup && err == nil {
		err = removeCgroup(c.dir)
	}
	c.m.mu.Lock()
	if c.kind == KindSubreaper {
		delete(c.m.leaders, c.leader)
	}
	if c.regLine != "" {
		err = errors.Join(err, c.m.unregisterLocked(c.regLine))
	}
	c.m.cellClosedLocked()
	c.m.mu.Unlock()
	c.closeErr = err
	return err
}

// cellClosedLocked removes this process's cgroup subtree once its last
// cell is gone, so an idle toolgate leaves nothing behind.
func (m *Manager) cellClosedLocked() {
	m.cells--
	if m.cells == 0 && m.root != "" {
		if removeCgroup(m.root) == nil {
			m.root = ""
		}
	}
}

// waitGone waits until every pid has exited (zombies count as exited),
// on pidfds, for at most d.
func waitGone(pids []int, d time.Duration) {
	deadline := time.Now().Add(d)
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue // already gone
		}
		for {
			left := time.Until(deadline)
			if left <= 0 {
				break
			}
			n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(left/time.Millisecond)+1)
			if n > 0 || (err != nil && !errors.Is(err, unix.EINTR)) {
				break
			}
		}
		_ = unix.Close(fd)
	}
}

// endAll kills the registered cgroups and process groups (with every
// descendant a walk finds) and removes the cgroups.
func endAll(cgroups map[string]bool, groups map[int]bool) {
	parents := map[string]bool{}
	for dir := range cgroups {
		_ = killCgroup(dir)
	}
	for dir := range cgroups {
		_ = waitCgroupEmpty(dir, stopTimeout, func() error { return killCgroup(dir) })
		_ = removeCgroup(dir)
		parents[filepath.Dir(dir)] = true
	}
	for dir := range parents {
		if strings.HasPrefix(filepath.Base(dir), "toolgate-") {
			_ = removeCgroup(dir) // fails while another cell of a live toolgate uses it
		}
	}
	if len(groups) == 0 {
		return
	}
	fam := newFamily()
	for pgid := range groups {
		fam.addGroup(pgid)
	}
	deadline := time.Now().Add(stopTimeout)
	for time.Now().Before(deadline) {
		sent, _ := fam.signal(syscall.SIGKILL, 0)
		if len(sent) == 0 {
			return
		}
		waitGone(sent, time.Until(deadline))
	}
}
