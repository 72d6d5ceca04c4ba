//go:build unix

package reload

import (
	"os"
	"syscall"
	"testing"
)

// raiseHangup sends SIGHUP to the test process, as an operator would.
func raiseHangup(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
}
