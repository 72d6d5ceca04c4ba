package procwatch

import (
	"os/exec"
	"regexp"
	"slices"
	"syscall"
	"testing"
	"time"
)

// The ps(1) reading that macOS and the BSDs rely on must agree with /proc
// for a real process group: same members, same children.
func TestPSAgreesWithProc(t *testing.T) {
	// Members join the group at fork, so both are in it once "ready" is out.
	cmd := DieWithTest(exec.Command("sh", "-c", "sleep 60 & sleep 60 & echo ready; wait"))
	cmd.SysProcAttr.Setpgid = true
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	pgid := cmd.Process.Pid
	if _, err := WaitLine(t.Context(), out, regexp.MustCompile("ready")); err != nil {
		t.Fatal(err)
	}
	want := GroupMembers(pgid)
	if len(want) != 2 {
		t.Fatalf("/proc shows group members %v, want the two sleeps", want)
	}
	got := psWhere(func(e psEntry) bool { return e.pid != pgid && e.pgid == pgid })
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("ps group members = %v, /proc says %v", got, want)
	}
	if kids := psWhere(func(e psEntry) bool { return e.ppid == pgid }); !slices.Equal(sorted(kids), sorted(Children(pgid))) {
		t.Errorf("ps children = %v, /proc says %v", kids, Children(pgid))
	}
}

func sorted(s []int) []int { slices.Sort(s); return s }

func TestParsePSTime(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"00:00:01":   time.Second,
		"1-02:03:04": 26*time.Hour + 3*time.Minute + 4*time.Second,
		"0:01.50":    1500 * time.Millisecond,
		"12:34.00":   12*time.Minute + 34*time.Second,
		"garbage":    0,
	} {
		if got := parsePSTime(in); got != want {
			t.Errorf("parsePSTime(%q) = %v, want %v", in, got, want)
		}
	}
}
