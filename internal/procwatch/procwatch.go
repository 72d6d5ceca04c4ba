package procwatch

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
)

// WaitLine reads r line by line until a line matches re and returns the
// first submatch (or the whole match). It keeps draining r afterwards in
// a goroutine that ends at EOF, so a child never blocks on a full pipe.
func WaitLine(ctx context.Context, r io.Reader, re *regexp.Regexp) (string, error) {
	type result struct {
		s   string
		err error
	}
	found := make(chan result, 1)
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		sent := false
		var seen []string
		for sc.Scan() {
			if sent {
				continue
			}
			line := sc.Text()
			seen = append(seen, line)
			if m := re.FindStringSubmatch(line); m != nil {
				s := m[0]
				if len(m) > 1 {
					s = m[1]
				}
				found <- result{s: s}
				sent = true
			}
		}
		if !sent {
			found <- result{err: fmt.Errorf("no line matched %q before EOF; got:\n%s", re, strings.Join(seen, "\n"))}
		}
	}()
	select {
	case r := <-found:
		return r.s, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Kill ends pid at once (SIGKILL on Unix, TerminateProcess on Windows),
// without giving it a chance to clean up.
func Kill(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	defer p.Release()
	return p.Kill()
}

// feedLines runs read in a goroutine; each line it passes to send goes to
// the returned channel. send and stopped return false and true once stop
// was called, and read must then return. stop closes f (unblocking a
// pending read) and waits for the goroutine; it is idempotent.
func feedLines(f *os.File, read func(send func(string) bool, stopped func() bool)) (<-chan string, func()) {
	ch := make(chan string, 1024)
	done, quit := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer close(ch)
		send := func(line string) bool {
			select {
			case ch <- line:
				return true
			case <-quit:
				return false
			}
		}
		stopped := func() bool {
			select {
			case <-quit:
				return true
			default:
				return false
			}
		}
		read(send, stopped)
	}()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			close(quit)
			_ = f.Close()
			<-done
		})
	}
}
