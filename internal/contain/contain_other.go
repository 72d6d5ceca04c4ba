//go:build !linux

package contain

import (
	"runtime"
	"syscall"
	"time"
)

// Default returns the process-wide manager.
func Default() *Manager { return defaultMgr }

var defaultMgr = &Manager{}

// Manager creates cells. Outside Linux a cell is the process group
// (Unix; host/launch adds its watchdog) or the Job Object host/launch
// creates (Windows): there is nothing to create here.
type Manager struct{}

// NewManager returns a manager; outside Linux every manager is the same.
func NewManager(Kind) *Manager { return defaultMgr }

func osKind() Kind {
	if runtime.GOOS == "windows" {
		return KindJobObject
	}
	return KindProcessGroup
}

// Kind reports the containment cells use here.
func (*Manager) Kind() (Kind, error) { return osKind(), nil }

// NewCell returns a cell that holds nothing of its own.
func (*Manager) NewCell(string) (*Cell, error) { return &Cell{}, nil }

// Cell is a no-op outside Linux; see [Manager].
type Cell struct{}

// Kind is the containment this cell uses.
func (*Cell) Kind() Kind { return osKind() }

// Prepare does nothing here.
func (*Cell) Prepare(*syscall.SysProcAttr) {}

// Started does nothing here.
func (*Cell) Started(int) error { return nil }

// Others reports false: the owner tracks its process group itself.
func (*Cell) Others() bool { return false }

// SignalOthers does nothing here.
func (*Cell) SignalOthers(syscall.Signal) error { return nil }

// WaitEmpty reports true: the owner tracks its process group itself.
func (*Cell) WaitEmpty(time.Duration) bool { return true }

// Kill does nothing here.
func (*Cell) Kill() error { return nil }

// Close does nothing here.
func (*Cell) Close() error { return nil }
