//go:build unix

package oauth

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/toolgate/toolgate/internal/filelock"
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
		locked, err := filelock.TryLock(f)
		if err != nil {
			_ = f.Close()
			return nil, err
		}
		if locked {
			return func() {
				_ = filelock.Unlock(f)
				_ = f.Close()
			}, nil
		}
		select {
		case <-ticker.C:
		case <-ctx.Done():
			_ = f.Close()
			return nil, ctx.Err()
		}
	}
}
