//go:build unix

package procwatch

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// LineFIFO creates a named pipe in dir and returns its path and a channel
// of the lines written to it. Tests hand the path to a process (e.g.
// mcp-demo --call-log) and wait on lines instead of polling a file. The
// reader ends when stop is called; stop is idempotent.
func LineFIFO(dir string) (path string, lines <-chan string, stop func(), err error) {
	path = filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(path, 0o600); err != nil {
		return "", nil, nil, fmt.Errorf("mkfifo: %w", err)
	}
	// O_RDWR keeps the FIFO open for reading without waiting for a writer
	// and means a writer closing does not end our stream.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return "", nil, nil, err
	}
	lines, stop = feedLines(f, func(send func(string) bool, _ func() bool) {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() && send(sc.Text()) {
		}
	})
	return path, lines, stop, nil
}
