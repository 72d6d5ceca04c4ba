package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrReadOnlyConfig is matched (errors.Is) by ReadOnly's answer: the
// config file cannot be rewritten in place, as when it is mounted from a
// Kubernetes ConfigMap, so "Allow and don't ask me again" cannot be
// saved.
var ErrReadOnlyConfig = errors.New("the configuration is read-only")

// ReadOnly reports whether RememberToolApproval could not replace one of
// paths: the file (through its symlinks, as a ConfigMap mounts it) or its
// directory is not writable, or sits on a read-only file system. It only
// looks; it writes nothing. nil means every file looks writable.
func ReadOnly(paths ...string) error {
	for _, p := range paths {
		target, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue // RememberToolApproval says what is wrong with it
		}
		// A file nobody may write is read-only by intent, even for
		// root, whom access(2) lets write anything on a writable mount.
		if info, err := os.Stat(target); err == nil && info.Mode().Perm()&0o222 == 0 {
			return fmt.Errorf("%w: %s has mode %v", ErrReadOnlyConfig, target, info.Mode().Perm())
		}
		// RememberToolApproval replaces the file by renaming a new one
		// into its directory: both must be writable.
		for _, q := range []string{target, filepath.Dir(target)} {
			if err := writable(q); err != nil {
				return fmt.Errorf("%w: %s: %w", ErrReadOnlyConfig, q, err)
			}
		}
	}
	return nil
}
