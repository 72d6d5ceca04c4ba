//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly || windows

package filelock

import (
	"os"
	"path/filepath"
	"testing"
)

// Two opens of one lock file exclude each other, in one process as
// across processes: TryLock fails while the other holds the lock, and
// succeeds once it is released.
func TestTwoOpensExcludeEachOther(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	if err := Lock(a); err != nil {
		t.Fatal(err)
	}
	if ok, err := TryLock(b); err != nil || ok {
		t.Fatalf("TryLock while another open holds the lock = %v, %v; want false, nil", ok, err)
	}
	if err := Unlock(a); err != nil {
		t.Fatal(err)
	}
	if ok, err := TryLock(b); err != nil || !ok {
		t.Fatalf("TryLock after the release = %v, %v; want true, nil", ok, err)
	}
	if err := Unlock(b); err != nil {
		t.Fatal(err)
	}
}
