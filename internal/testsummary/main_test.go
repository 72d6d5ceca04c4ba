package main

import (
	"os"
	"strings"
	"testing"
)

// TestSummaryOfARealRun renders testdata/run.json, the `go test -json`
// output of a small package with a passing, a failing and two skipping
// tests: the failure is shown as plain go test shows it, the passing
// test's log is not, and the skips are listed at the end with why.
func TestSummaryOfARealRun(t *testing.T) {
	f, err := os.Open("testdata/run.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out strings.Builder
	s := &summary{out: &out, pending: map[testKey][]string{}}
	if err := s.read(f); err != nil {
		t.Fatal(err)
	}
	s.printSkips()
	got := out.String()
	// The package line's duration varies between captures; compare up to it.
	want := "--- FAIL: TestFails (0.00s)\n" +
		"    demo_test.go:7: count = 20, want 2\n" +
		"FAIL\n" +
		"FAIL\texample.com/demo\t"
	if !strings.HasPrefix(got, want) {
		t.Errorf("output starts\n%s\nwant\n%s", got, want)
	}
	wantSkips := "\nSkipped tests (2):\n" +
		"  example.com/demo TestSkipsForCgroup: demo_test.go:9: containment here is subreaper: no writable cgroup2\n" +
		"  example.com/demo TestSub/cgroup: demo_test.go:12: containment here is subreaper\n"
	if !strings.HasSuffix(got, wantSkips) {
		t.Errorf("output ends\n%s\nwant\n%s", got, wantSkips)
	}
	for _, never := range []string{"=== RUN", "quiet when it passes", "--- PASS", "--- SKIP"} {
		if strings.Contains(got, never) {
			t.Errorf("output shows %q:\n%s", never, got)
		}
	}
}
