package procwatch

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
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
