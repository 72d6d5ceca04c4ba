//go:build unix

package oauth

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// lockPoll is how often a waiting host retries a held lock. Holders keep
// it for one token refresh at most.
const lockPoll = 20 * time.Millisecond

// lockFile takes an exclusive flock on path, waiting until ctx is done.
// The kernel drops the lock if the process dies.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dirOf(path), 0o700); err != nil {
			return nil, err
		}
		f, err = os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	}
	if err != nil {
		return nil, err
	}
	ticker := time.NewTicker(lockPoll)
	defer ticker.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				_ = f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return nil, err
		}
		select {
		case <-ticker.C:
		case <-ctx.Done():
			_ = f.Close()
			return nil, ctx.Err()
		}
	}
}
