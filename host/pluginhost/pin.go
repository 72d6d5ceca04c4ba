package pluginhost

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// pinnedCopy copies a pinned plugin binary into a fresh private directory
// (0700, created by os.MkdirTemp) and returns the copy's path and the
// sha256 of its bytes.
//
// Why a copy: hashing block.Path and then executing block.Path leaves a
// window in which the file can be replaced, and the host would run a
// binary it never checked. The copy is what gets hashed (the digest is
// taken over exactly the bytes written to it) and what gets executed, and
// nobody else can write to a directory only this user can enter. This
// works the same on Linux, macOS and Windows, unlike executing through
// a verified file descriptor.
//
// The caller removes dir once the process has ended (Windows cannot
// delete a running executable). The copy keeps the binary's base name, so
// a plugin that names itself after its executable is unchanged.
func pinnedCopy(src *os.File, path string) (dir, copyPath, sum string, err error) {
	dir, err = os.MkdirTemp("", "toolgate-plugin-")
	if err != nil {
		return "", "", "", fmt.Errorf("creating a private directory for the verified copy: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dir)
			dir = ""
		}
	}()
	copyPath = filepath.Join(dir, filepath.Base(path))
	dst, err := os.OpenFile(copyPath, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o700)
	if err != nil {
		return "", "", "", fmt.Errorf("creating the verified copy: %w", err)
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(dst, h), src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", "", "", fmt.Errorf("copying %s to check its sha256: %w", path, err)
	}
	return dir, copyPath, hex.EncodeToString(h.Sum(nil)), nil
}
