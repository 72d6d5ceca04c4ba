//go:build !unix

package oauth

import (
	"context"
	"os"
)

// lockFile only makes sure the directory exists: without flock, hosts
// running at the same time rely on the atomic rename alone.
func lockFile(_ context.Context, path string) (func(), error) {
	if err := os.MkdirAll(dirOf(path), 0o700); err != nil {
		return nil, err
	}
	return func() {}, nil
}
