//go:build !unix

package config

import "os"

// writable checks the read-only attribute: Windows has no access(2), and
// a file or directory marked read-only is what blocks the rewrite there.
func writable(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !info.IsDir() && info.Mode().Perm()&0o200 == 0 {
		return os.ErrPermission
	}
	return nil
}
