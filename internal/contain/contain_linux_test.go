package contain

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/internal/testwait"
)

// TestCloseEndsEverythingTheChildStarted: a server whose three children
// stay in its group and whose grandchild calls setsid leaves nothing
// behind once its cell is closed, with cgroups and with the subreaper
// walk; the cgroup is removed and the supervisor has exited.
func TestCloseEndsEverythingTheChildStarted(t *testing.T) {
	for _, mode := range []Kind{KindCgroup, KindSubreaper} {
		t.Run(string(mode), func(t *testing.T) {
			m := newManager(string(mode))
			if kind, why := m.Kind(); kind != mode {
				if mode == KindCgroup {
					testbin.SkipWithoutCgroup(t, "containment here is %s: %v", kind, why)
				}
				t.Skipf("containment here is %s: %v", kind, why)
			}
			cell, err := m.NewCell("demo server/1")
			if err != nil {
				t.Fatal(err)
			}
			fifo, lines, stop, err := procwatch.LineFIFO(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(stop)
			cmd := exec.Command(testbin.Path(t, "mcp-demo"), "--spawn-family", fifo)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			cell.Prepare(cmd)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if err := cell.Started(cmd.Process.Pid); err != nil {
				t.Fatal(err)
			}
			var family []int
			for f := range strings.FieldsSeq(testwait.Recv(t, lines, "the family line")) {
				pid, _ := strconv.Atoi(f)
				family = append(family, pid)
			}
			if len(family) != 5 {
				t.Fatalf("family %v, want 5 pids", family)
			}
			m.mu.Lock()
			sup := m.sup
			m.mu.Unlock()
			if sup == nil {
				t.Fatal("no supervisor runs while a cell is registered")
			}
			if !cell.Others() {
				t.Error("Others() = false while the server's children run")
			}
			// The server exits on stdin EOF; what it started stays.
			_ = stdin.Close()
			_ = cmd.Wait()
			if !procwatch.Alive(family[4]) {
				t.Fatal("the setsid grandchild died with the server; the test proves nothing")
			}
			if err := cell.Close(); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			for _, pid := range append(family, sup.cmd.Process.Pid) {
				if err := procwatch.WaitGone(ctx, pid); err != nil {
					t.Errorf("process %d outlived its closed cell: %v", pid, err)
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			if mode == KindCgroup {
				if _, err := os.Stat(cell.dir); !os.IsNotExist(err) {
					t.Errorf("cgroup %s still exists after Close: %v", cell.dir, err)
				}
				if m.root != "" {
					t.Errorf("toolgate's cgroup %s was kept with no cell left", m.root)
				}
			}
			m.mu.Lock()
			defer m.mu.Unlock()
			if m.sup != nil {
				t.Error("the supervisor still runs with no cell registered")
			}
		})
	}
}

func TestParseMountinfoLine(t *testing.T) {
	for _, tt := range []struct {
		line, point, root string
		ok                bool
	}{
		{"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw", "/sys/fs/cgroup/unified", "/", true},
		{"30 23 0:26 /ns /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate", "/sys/fs/cgroup", "/ns", true},
		{`30 23 0:26 / /mnt/with\040space rw - cgroup2 none rw`, "/mnt/with space", "/", true},
		{"35 31 0:31 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids", "", "", false},
		{"garbage", "", "", false},
	} {
		point, root, ok := parseMountinfoLine(tt.line)
		if point != tt.point || root != tt.root || ok != tt.ok {
			t.Errorf("parseMountinfoLine(%q) = %q, %q, %v; want %q, %q, %v", tt.line, point, root, ok, tt.point, tt.root, tt.ok)
		}
	}
}

func TestUnifiedPath(t *testing.T) {
	if p, ok := unifiedPath([]byte("9:name=systemd:/\n8:pids:/\n0::/user.slice/x.scope\n")); !ok || p != "/user.slice/x.scope" {
		t.Errorf("unifiedPath = %q, %v", p, ok)
	}
	if _, ok := unifiedPath([]byte("9:name=systemd:/\n")); ok {
		t.Error("a v1-only file has no cgroup2 path")
	}
}

func TestParseProcStat(t *testing.T) {
	stat := "123 (a (weird) name) S 1 123 77 0 -1 4194304 100 0 0 0 5 6 0 0 20 0 1 0 98765 1000 10"
	info, ok := parseProcStat([]byte(stat))
	if !ok || info.state != 'S' || info.ppid != 1 || info.pgrp != 123 || info.sid != 77 || info.start != 98765 {
		t.Errorf("parseProcStat = %+v, %v", info, ok)
	}
}

func TestCellName(t *testing.T) {
	for in, want := range map[string]string{"demo": "demo", "a/b c": "a_b_c", "..": "cell", "": "cell", ".x": "x"} {
		if got := cellName(in); got != want {
			t.Errorf("cellName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestKilledSupervisorIsReplaced: a supervisor that someone killed is
// noticed at the next registration and replaced by one that knows every
// cell, instead of leaving cells unguarded or failing them.
func TestKilledSupervisorIsReplaced(t *testing.T) {
	m := newManager("")
	if kind, why := m.Kind(); kind != KindCgroup {
		testbin.SkipWithoutCgroup(t, "containment here is %s: %v", kind, why)
	}
	first, err := m.NewCell("first")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = first.Close() }) // a failing run leaves no cgroup
	m.mu.Lock()
	old := m.sup
	m.mu.Unlock()
	if err := syscall.Kill(old.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := procwatch.WaitGone(t.Context(), old.cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	second, err := m.NewCell("second")
	t.Cleanup(func() { _ = second.Close() })
	if err != nil || second.Kind() != KindCgroup {
		t.Fatalf("cell after the supervisor died: %v, %v", second.Kind(), err)
	}
	m.mu.Lock()
	now := m.sup
	m.mu.Unlock()
	if now == nil || now == old || !now.lines["c "+first.dir] || !now.lines["c "+second.dir] {
		t.Fatalf("the new supervisor does not hold both cells: %+v", now)
	}
	if err := errors.Join(first.Close(), second.Close()); err != nil {
		t.Fatal(err)
	}
	if err := procwatch.WaitGone(t.Context(), now.cmd.Process.Pid); err != nil {
		t.Errorf("the supervisor outlived the last cell: %v", err)
	}
}

// TestKillWithoutCgroupKill covers kernels before 5.14, which have no
// cgroup.kill: SIGKILL to every pid in cgroup.procs, repeated until the
// cgroup is empty, ends a server and its setsid grandchild all the same.
func TestKillWithoutCgroupKill(t *testing.T) {
	m := newManager("")
	if kind, why := m.Kind(); kind != KindCgroup {
		testbin.SkipWithoutCgroup(t, "containment here is %s: %v", kind, why)
	}
	cell, err := m.NewCell("old-kernel")
	if err != nil {
		t.Fatal(err)
	}
	defer cell.Close()
	fifo, lines, stop, err := procwatch.LineFIFO(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	cmd := exec.Command(testbin.Path(t, "mcp-demo"), "--spawn-family", fifo)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if _, err := cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	cell.Prepare(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := cell.Started(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	var family []int
	for f := range strings.FieldsSeq(testwait.Recv(t, lines, "the family line")) {
		pid, _ := strconv.Atoi(f)
		family = append(family, pid)
	}
	kill := func() error { return signalCgroupTree(cell.dir, syscall.SIGKILL) }
	if err := kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if err := waitCgroupEmpty(cell.dir, 5*time.Second, kill); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	for _, pid := range family {
		if err := procwatch.WaitGone(ctx, pid); err != nil {
			t.Errorf("process %d survived: %v", pid, err)
		}
	}
}

// TestNothingLeftNeedsNoWalk: the subreaper's cheap check says a cell is
// empty only once its leader exited and this process adopted nothing;
// while the leader lives, or after it left an orphan, the walk decides,
// and Close still ends the orphan.
func TestNothingLeftNeedsNoWalk(t *testing.T) {
	m := newManager(string(KindSubreaper))
	if kind, why := m.Kind(); kind != KindSubreaper {
		t.Skipf("containment here is %s: %v", kind, why)
	}
	start := func(script string) (*Cell, *exec.Cmd, func()) {
		t.Helper()
		cell, err := m.NewCell("check")
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("/bin/sh", "-c", script)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		cell.Prepare(cmd)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if err := cell.Started(cmd.Process.Pid); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cell.Close() })
		return cell, cmd, func() { _ = stdin.Close(); _ = cmd.Wait() }
	}
	nothingLeft := func(c *Cell) bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.nothingLeft()
	}

	cell, _, exit := start("read x")
	if nothingLeft(cell) {
		t.Error("nothingLeft while the leader runs: its children are its own, not ours to see")
	}
	exit()
	if !nothingLeft(cell) {
		t.Error("nothingLeft = false for a leader that exited alone: every hook call would walk /proc")
	}
	if err := cell.Close(); err != nil {
		t.Fatal(err)
	}

	cell, cmd, exit := start(`(trap "" TERM; exec sleep 60) </dev/null >/dev/null 2>&1 & read x`)
	exit()
	orphans := 0
	for _, pid := range cell.othersLocked() {
		if pid != cmd.Process.Pid {
			orphans++
		}
	}
	if orphans == 0 || nothingLeft(cell) {
		t.Fatalf("after the leader left a child: %d found by the walk, nothingLeft %v; want the orphan found", orphans, nothingLeft(cell))
	}
	left := cell.othersLocked()
	if err := cell.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range left {
		if err := procwatch.WaitGone(testwait.Context(t), pid); err != nil {
			t.Errorf("the orphan %d outlived Close: %v", pid, err)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
