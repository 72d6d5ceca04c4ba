//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package filelock

import (
	"errors"
	"os"
	"syscall"
)

// Lock takes an exclusive lock on f, waiting for it. flock locks belong
// to the open file, so two opens in one process exclude each other too.
func Lock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// TryLock takes an exclusive lock on f if nobody holds it, and reports
// whether it did.
func TryLock(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case !errors.Is(err, syscall.EINTR):
			return false, err
		}
	}
}

// Unlock releases the lock Lock or TryLock took.
func Unlock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
