//go:build unix

package contain

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testbin"
)

// ownerEnv makes the test binary play a process that starts a child in a
// cell and is then SIGKILLed (see runOwner).
const ownerEnv = "CONTAIN_TEST_OWNER"

func TestMain(m *testing.M) {
	RunSupervisorIfAsked()
	if os.Getenv(ownerEnv) != "" {
		os.Exit(runOwner())
	}
	os.Exit(testbin.Main(m))
}

// runOwner starts, in a cell of the process-wide manager, a shell that
// starts a grandchild in its process group, and prints "<grandchild>
// <supervisor>" pids. Then it blocks until it is killed.
func runOwner() int {
	cell, err := Default().NewCell("victim")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	cmd := exec.Command("/bin/sh", "-c", "sleep 600 & echo $!; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cell.Prepare(cmd)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := cell.Started(cmd.Process.Pid); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		fmt.Fprintln(os.Stderr, "no grandchild pid:", err)
		return 2
	}
	sup := 0
	Default().mu.Lock()
	if Default().sup != nil {
		sup = Default().sup.cmd.Process.Pid
	}
	Default().mu.Unlock()
	fmt.Println(strings.TrimSpace(line), sup)
	select {} // until SIGKILL
}

// TestSupervisorEndsCellsOfAKilledOwner: when the process that made a
// cell is SIGKILLed (no chance to clean up), its one supervisor ends what
// the cell holds, a grandchild in the child's process group included, and
// then exits. This is the macOS mechanism (process group plus supervisor,
// no parent-death signal); on Linux the same test covers the cgroup or
// subreaper supervisor (the shell's Pdeathsig would end the shell, not
// its grandchild).
func TestSupervisorEndsCellsOfAKilledOwner(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	owner := exec.Command(exe)
	owner.Env = append(os.Environ(), ownerEnv+"=1")
	owner.Stderr = os.Stderr
	out, err := owner.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = owner.Process.Kill(); _ = owner.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("owner printed nothing: %v", err)
	}
	var pids []int
	for _, f := range strings.Fields(line) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("owner printed %q", line)
		}
		pids = append(pids, pid)
		if len(pids) == 1 { // the grandchild: never left behind
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
		}
	}
	if len(pids) != 2 || pids[1] == 0 {
		t.Fatalf("owner printed %q, want the grandchild's and a supervisor's pid", line)
	}
	grandchild, supervisor := pids[0], pids[1]
	if !procwatch.Alive(grandchild) {
		t.Fatal("the grandchild is gone before its owner was killed")
	}

	if err := owner.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = owner.Wait()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := procwatch.WaitGone(ctx, grandchild); err != nil {
		t.Fatalf("the grandchild outlived its SIGKILLed owner: %v", err)
	}
	if err := procwatch.WaitGone(ctx, supervisor); err != nil {
		t.Errorf("the supervisor outlived its work: %v", err)
	}
}
