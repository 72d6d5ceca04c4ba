//go:build unix

package procwatch

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// psEntry is one process as ps(1) reports it. ps is how Unixes without
// /proc (macOS, the BSDs) list processes; it is used there, and on Linux
// only by the test that checks it against /proc.
type psEntry struct {
	pid, ppid, pgid int
	state           string
	cpu             time.Duration
}

func (e psEntry) live() bool { return !strings.HasPrefix(e.state, "Z") }

// psTable lists every process. The column set is the POSIX one that both
// procps (Linux) and BSD ps (macOS) understand; "=" suppresses headers.
func psTable() ([]psEntry, error) {
	out, err := exec.Command("ps", "-A", "-o", "pid=,ppid=,pgid=,stat=,time=").Output()
	if err != nil {
		return nil, fmt.Errorf("ps: %w", err)
	}
	return parsePS(out), nil
}

func parsePS(out []byte) []psEntry {
	var table []psEntry
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 {
			continue
		}
		pid, err1 := strconv.Atoi(f[0])
		ppid, err2 := strconv.Atoi(f[1])
		pgid, err3 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		table = append(table, psEntry{pid: pid, ppid: ppid, pgid: pgid, state: f[3], cpu: parsePSTime(f[4])})
	}
	return table
}

// parsePSTime reads ps's cumulative CPU time: "[dd-]hh:mm:ss" (procps) or
// "m:ss.cc" (BSD). Unreadable input is zero.
func parsePSTime(s string) time.Duration {
	var days int
	if d, rest, ok := strings.Cut(s, "-"); ok {
		days, _ = strconv.Atoi(d)
		s = rest
	}
	var total float64
	for part := range strings.SplitSeq(s, ":") {
		v, err := strconv.ParseFloat(part, 64)
		if err != nil {
			return 0
		}
		total = total*60 + v
	}
	return time.Duration(days)*24*time.Hour + time.Duration(total*float64(time.Second))
}

// psWhere lists the live pids whose entry matches.
func psWhere(match func(psEntry) bool) []int {
	table, err := psTable()
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range table {
		if e.live() && match(e) {
			out = append(out, e.pid)
		}
	}
	return out
}
