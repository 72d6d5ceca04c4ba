package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string // build-output events
}

type testKey struct{ pkg, test string }

// summary turns events into go test's plain output plus a skip list.
type summary struct {
	out     io.Writer
	pending map[testKey][]string // output of tests still running
	skipped []skip
}

type skip struct{ pkg, test, why string }

func main() {
	s := &summary{out: os.Stdout, pending: map[testKey][]string{}}
	if err := s.read(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	s.printSkips()
}

func (s *summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// Not an event (go test's own complaints): pass it on.
			fmt.Fprintf(s.out, "%s\n", line)
			continue
		}
		s.handle(e)
	}
	return sc.Err()
}

func (s *summary) handle(e event) {
	if e.Action == "build-output" {
		fmt.Fprint(s.out, e.Output)
		return
	}
	if e.Test == "" {
		s.packageEvent(e)
		return
	}
	k := testKey{e.Package, e.Test}
	switch e.Action {
	case "output":
		s.pending[k] = append(s.pending[k], e.Output)
	case "fail":
		s.flush(k)
	case "pass":
		delete(s.pending, k)
	case "skip":
		s.skipped = append(s.skipped, skip{e.Package, e.Test, skipReason(s.pending[k])})
		delete(s.pending, k)
	}
}

// packageEvent prints a package's own output as plain go test does: its
// ok/FAIL line, panics and races outside any test; -json's extra "PASS"
// line is dropped. When the package failed, the output of tests that
// never finished (a timeout, a crash) is printed too.
func (s *summary) packageEvent(e event) {
	switch e.Action {
	case "output":
		if e.Output != "PASS\n" {
			fmt.Fprint(s.out, e.Output)
		}
	case "fail":
		var keys []testKey
		for k := range s.pending {
			if k.pkg == e.Package {
				keys = append(keys, k)
			}
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i].test < keys[j].test })
		for _, k := range keys {
			s.flush(k)
		}
	}
}

// flush prints a failed test's output without -v's progress lines, its
// "--- FAIL" line first as plain go test prints it (-json reports it
// after the test's log).
func (s *summary) flush(k testKey) {
	var head, body []string
	for _, line := range s.pending[k] {
		switch {
		case isProgress(line):
		case strings.HasPrefix(strings.TrimLeft(line, " "), "--- FAIL"):
			head = append(head, line)
		default:
			body = append(body, line)
		}
	}
	for _, line := range append(head, body...) {
		fmt.Fprint(s.out, line)
	}
	delete(s.pending, k)
}

func isProgress(line string) bool {
	for _, p := range []string{"=== RUN ", "=== PAUSE ", "=== CONT ", "=== NAME "} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// skipReason is what a skipped test logged, without the --- SKIP line.
func skipReason(lines []string) string {
	var why []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || isProgress(l) || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		why = append(why, t)
	}
	if len(why) == 0 {
		return "(no reason given)"
	}
	return strings.Join(why, " ")
}

func (s *summary) printSkips() {
	if len(s.skipped) == 0 {
		return
	}
	sort.Slice(s.skipped, func(i, j int) bool {
		a, b := s.skipped[i], s.skipped[j]
		return a.pkg < b.pkg || a.pkg == b.pkg && a.test < b.test
	})
	fmt.Fprintf(s.out, "\nSkipped tests (%d):\n", len(s.skipped))
	for _, sk := range s.skipped {
		fmt.Fprintf(s.out, "  %s %s: %s\n", sk.pkg, sk.test, sk.why)
	}
}
