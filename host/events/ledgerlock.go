package events

import (
	"fmt"
	"os"
)

// ledgerLock serializes the writers of one ledger across processes: the
// chain links every record to the one before it, so toolgate serve and a
// toolgate call on the same configuration must not both append from
// what each last wrote. It is an exclusive lock on a file beside the
// ledger (PATH.lock), not on the ledger itself, because rotation moves
// the ledger aside while the lock is held. The lock file is never
// removed: removing it would let two writers hold locks on two files.
type ledgerLock struct {
	f *os.File
}

func openLedgerLock(path string) (*ledgerLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log: its lock file: %w; point audit_log at a file in a writable directory", err)
	}
	return &ledgerLock{f: f}, nil
}

// hold waits until this process holds the lock, and returns its release.
func (l *ledgerLock) hold() (release func(), err error) {
	if err := lockFile(l.f); err != nil {
		return nil, fmt.Errorf("lock %s: %w", l.f.Name(), err)
	}
	return func() { _ = unlockFile(l.f) }, nil
}

func (l *ledgerLock) close() error { return l.f.Close() }
