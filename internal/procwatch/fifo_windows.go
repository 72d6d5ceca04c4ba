package procwatch

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// LineFIFO creates a file in dir and returns its path and a channel of the
// lines written to it. Windows has no named pipes in the file system, so
// this is a weaker stand-in for the Unix FIFO: the file is read from the
// start and re-read after EOF every 10 ms. The reader ends when stop is
// called; stop is idempotent.
func LineFIFO(dir string) (path string, lines <-chan string, stop func(), err error) {
	path = filepath.Join(dir, "fifo")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", nil, nil, err
	}
	lines, stop = feedLines(f, func(send func(string) bool, stopped func() bool) {
		r := bufio.NewReader(f)
		var partial strings.Builder
		for {
			chunk, err := r.ReadString('\n')
			partial.WriteString(chunk)
			if err == nil {
				if !send(strings.TrimRight(partial.String(), "\r\n")) {
					return
				}
				partial.Reset()
				continue
			}
			// EOF for now (or the file was closed by stop): look again
			// shortly, unless stop says to end.
			if stopped() {
				return
			}
			timer := time.NewTimer(10 * time.Millisecond)
			<-timer.C
		}
	})
	return path, lines, stop, nil
}
