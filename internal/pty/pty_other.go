//go:build !linux

package pty

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

// Open is only implemented on Linux; elsewhere it returns an error that
// matches [ErrUnsupported], and tests that need a terminal skip.
func Open() (master, slave *os.File, err error) {
	return nil, nil, fmt.Errorf("pseudo-terminals for tests on %s: %w", runtime.GOOS, ErrUnsupported)
}

// ErrUnsupported is errors.ErrUnsupported, named here for callers.
var ErrUnsupported = errors.ErrUnsupported
