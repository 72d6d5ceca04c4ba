//go:build unix

package config

import "golang.org/x/sys/unix"

// writable asks the kernel whether this process may write path: it
// answers EROFS for a read-only mount (a ConfigMap volume) and EACCES for
// missing permission, without writing anything.
func writable(path string) error {
	return unix.Access(path, unix.W_OK)
}
