package procwatch

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"sync"
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
	ch := make(chan string, 1024)
	done, quit := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer close(ch)
		r := bufio.NewReader(f)
		var partial strings.Builder
		for {
			chunk, err := r.ReadString('\n')
			partial.WriteString(chunk)
			if err == nil {
				select {
				case ch <- strings.TrimRight(partial.String(), "\r\n"):
				case <-quit:
					return
				}
				partial.Reset()
				continue
			}
			timer := time.NewTimer(10 * time.Millisecond)
			select {
			case <-quit:
				timer.Stop()
				return
			case <-timer.C:
			}
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			close(quit)
			<-done
			_ = f.Close()
		})
	}
	return path, ch, stop, nil
}
