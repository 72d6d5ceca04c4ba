package testbin

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// recordingT records how a test ended; Fatalf and Skip end its goroutine
// as testing.T's do.
type recordingT struct {
	testing.TB
	failed, skipped string
}

func (*recordingT) Helper() {}
func (r *recordingT) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *recordingT) Skip(args ...any) {
	r.skipped = fmt.Sprint(args...)
	runtime.Goexit()
}

func skipWithoutCgroup() *recordingT {
	r := &recordingT{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		SkipWithoutCgroup(r, "containment here is %s", "subreaper")
	}()
	<-done
	return r
}

func TestSkipWithoutCgroupSkipsUnlessRequired(t *testing.T) {
	t.Setenv(EnvRequireCgroup, "")
	if r := skipWithoutCgroup(); r.skipped != "containment here is subreaper" || r.failed != "" {
		t.Errorf("without %s: skipped %q, failed %q; want a skip", EnvRequireCgroup, r.skipped, r.failed)
	}
	t.Setenv(EnvRequireCgroup, "1")
	r := skipWithoutCgroup()
	if r.skipped != "" || !strings.Contains(r.failed, "TOOLGATE_REQUIRE_CGROUP=1 but no cgroup containment here: containment here is subreaper") {
		t.Errorf("with %s=1: skipped %q, failed %q; want a failure naming why", EnvRequireCgroup, r.skipped, r.failed)
	}
}
