//go:build unix && !linux

package contain

import (
	"fmt"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Default returns the process-wide manager.
func Default() *Manager { return defaultMgr }

var defaultMgr = &Manager{}

// Manager creates cells: here a cell is the child's process group, which
// the process-wide supervisor kills if this process dies (there is no
// parent-death signal outside Linux). It is safe for concurrent use.
type Manager struct {
	mu  sync.Mutex
	sup *supervisorConn
}

// NewManager returns a manager of its own (benchmarks compare
// containments with it on Linux; here every kind is the process group).
func NewManager(Kind) *Manager { return &Manager{} }

// Kind reports the containment cells use here.
func (*Manager) Kind() (Kind, error) { return KindProcessGroup, nil }

// NewCell returns a cell for one child, named after name.
func (m *Manager) NewCell(string) (*Cell, error) { return &Cell{m: m}, nil }

// Cell is one child's process group. Its owner signals the group (it
// knows when the leader is reaped); the cell registers the group with the
// supervisor between Started and Close.
type Cell struct {
	m *Manager

	mu      sync.Mutex
	regLine string
	closed  bool
}

// Kind is the containment this cell uses.
func (*Cell) Kind() Kind { return KindProcessGroup }

// Prepare gives cmd a process group of its own.
func (*Cell) Prepare(cmd *exec.Cmd) { sysProcAttr(cmd).Setpgid = true }

// Started registers the child's process group with the supervisor. An
// error means the child would outlive this process's death: the caller
// should kill it.
func (c *Cell) Started(pid int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	line := "g " + strconv.Itoa(pid)
	c.m.mu.Lock()
	err := c.m.registerLocked(line)
	c.m.mu.Unlock()
	if err != nil {
		return fmt.Errorf("register process group %d: %w", pid, err)
	}
	c.regLine = line
	return nil
}

// Others reports false: the owner tracks its process group itself.
func (*Cell) Others() bool { return false }

// SignalOthers does nothing: the owner signals the group.
func (*Cell) SignalOthers(syscall.Signal) error { return nil }

// WaitEmpty reports true: the owner tracks its process group itself.
func (*Cell) WaitEmpty(time.Duration) bool { return true }

// Kill does nothing: the owner kills the group.
func (*Cell) Kill() error { return nil }

// Close withdraws the group from the supervisor (the last withdrawal
// ends the supervisor). Call it once the group is gone; it is idempotent.
func (c *Cell) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.regLine == "" {
		c.closed = true
		return nil
	}
	c.closed = true
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	return c.m.unregisterLocked(c.regLine)
}

// endAll kills every registered process group: this process died.
func endAll(_ map[string]bool, groups map[int]bool) {
	for pgid := range groups {
		_ = syscall.Kill(-pgid, syscall.SIGKILL) // ESRCH: already gone
	}
}
