package contain

import (
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// RunSupervisorIfAsked returns at once: on Windows the Job Object's
// kill-on-close does the supervisor's work (the kernel closes a dead
// process's handles).
func RunSupervisorIfAsked() { supervisable.Store(true) }

// Default returns the process-wide manager.
func Default() *Manager { return defaultMgr }

var defaultMgr = &Manager{}

// Manager creates cells: each a Job Object.
type Manager struct{}

// NewManager returns a manager; on Windows every manager is the same.
func NewManager(Kind) *Manager { return defaultMgr }

// Kind reports the containment cells use here.
func (*Manager) Kind() (Kind, error) { return KindJobObject, nil }

// NewCell creates the cell's Job Object, with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE: its only handle is this process's,
// so when this process exits (even killed) Windows closes the handle and
// ends every process in the job.
func (*Manager) NewCell(name string) (*Cell, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return &Cell{}, fmt.Errorf("contain %q: create job object: %w", name, err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
		},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(job)
		return &Cell{}, fmt.Errorf("contain %q: set kill-on-close on job object: %w", name, err)
	}
	return &Cell{job: job}, nil
}

// Cell is one child's Job Object, holding the child and everything it
// starts. A cell whose job could not be made holds nothing, and Started
// refuses it.
type Cell struct {
	mu     sync.Mutex
	job    windows.Handle // 0 if none, or once closed
	closed bool
}

// Kind is the containment this cell uses.
func (*Cell) Kind() Kind { return KindJobObject }

// Prepare gives cmd a process group of its own (CREATE_NEW_PROCESS_GROUP),
// keeping what the owner set (a batch file's command line).
func (*Cell) Prepare(cmd *exec.Cmd) {
	sysProcAttr(cmd).CreationFlags |= windows.CREATE_NEW_PROCESS_GROUP
}

// Started assigns the child to the job. os/exec cannot start a process
// suspended, so a child it spawns within its first microseconds would
// escape. An error means the child is not contained: the caller should
// kill it.
func (c *Cell) Started(pid int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.job == 0 {
		return fmt.Errorf("no job object to put process %d in (so it would not die with the host)", pid)
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err == nil {
		err = windows.AssignProcessToJobObject(c.job, h)
		_ = windows.CloseHandle(h)
	}
	if err != nil {
		return fmt.Errorf("put process %d in a job object (so it dies with the host): %w", pid, err)
	}
	return nil
}

// Others reports false: Windows has no signal to ask the rest of the job
// first, so owners terminate the whole job.
func (*Cell) Others() bool { return false }

// SignalOthers does nothing: see Others.
func (*Cell) SignalOthers(syscall.Signal) error { return nil }

// WaitEmpty reports true: see Others.
func (*Cell) WaitEmpty(time.Duration) bool { return true }

// Kill terminates every process in the job at once.
func (c *Cell) Kill() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.killLocked()
}

func (c *Cell) killLocked() error {
	if c.closed || c.job == 0 {
		return nil
	}
	if err := windows.TerminateJobObject(c.job, 1); err != nil {
		return fmt.Errorf("terminate job object: %w", err)
	}
	return nil
}

// Close terminates what is left in the job and closes its handle. It is
// idempotent.
func (c *Cell) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	err := c.killLocked()
	if !c.closed && c.job != 0 {
		_ = windows.CloseHandle(c.job)
	}
	c.closed = true
	return err
}
