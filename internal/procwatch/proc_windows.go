package procwatch

import (
	"context"
	"fmt"
	"os/exec"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Alive reports whether pid exists and has not exited.
func Alive(pid int) bool {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 0)
	return err == nil && ev == uint32(windows.WAIT_TIMEOUT)
}

// GroupMembers is always empty on Windows: it has no Unix process groups
// (toolgate groups a server's processes in a Job Object instead).
func GroupMembers(pgid int) []int { return nil }

// Children returns the live processes whose parent is ppid.
func Children(ppid int) []int {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return nil
	}
	defer windows.CloseHandle(snap)
	var out []int
	entry := windows.ProcessEntry32{Size: uint32(unsafe.Sizeof(windows.ProcessEntry32{}))}
	for err = windows.Process32First(snap, &entry); err == nil; err = windows.Process32Next(snap, &entry) {
		if int(entry.ParentProcessID) == ppid && Alive(int(entry.ProcessID)) {
			out = append(out, int(entry.ProcessID))
		}
	}
	return out
}

// CPUTime is the CPU time (user and kernel) pid has used so far; zero when
// it cannot be read.
func CPUTime(pid int) time.Duration {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return 0
	}
	defer windows.CloseHandle(h)
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		return 0
	}
	ticks := func(f windows.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return time.Duration(ticks(kernel)+ticks(user)) * 100 // 100 ns units
}

// WaitGone blocks until pid has exited or ctx is done; the process handle
// is signalled the moment it exits.
func WaitGone(ctx context.Context, pid int) error {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return nil // no such process (any more)
	}
	defer windows.CloseHandle(h)
	for {
		ev, err := windows.WaitForSingleObject(h, 50)
		if err != nil {
			return fmt.Errorf("waiting for process %d: %w", pid, err)
		}
		if ev == windows.WAIT_OBJECT_0 {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("process %d still alive: %w", pid, ctx.Err())
		}
	}
}

// DieWithTest is a no-op on Windows, which has no parent-death signal: a
// test that times out may leave the processes it started behind (CI
// runners end them with the job). Tests still end their processes through
// their cleanups.
func DieWithTest(cmd *exec.Cmd) *exec.Cmd { return cmd }
