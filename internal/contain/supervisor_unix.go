//go:build unix

package contain

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
)

// RunSupervisorIfAsked is the explicit entry point of the supervisor: a
// binary whose processes start children in cells calls it first thing in
// main (toolgate does; launcher.Serve does for launcher plugins; test
// binaries do in TestMain). When this process was started as a
// supervisor (or as the clone3 probe, Linux) it does that job and exits;
// otherwise it returns at once and marks the binary as one that may be
// re-executed for the job. A binary that never calls it gets no
// supervisor: its cells still contain, but do not outlive its SIGKILL.
func RunSupervisorIfAsked() {
	switch os.Getenv(roleEnv) {
	case "supervisor":
		os.Exit(runSupervisor(os.Stdin))
	case "probe":
		os.Exit(0)
	}
	supervisable.Store(true)
}

// selfExe is the path that re-executes this binary: /proc/self/exe on
// Linux (immune to the file being replaced meanwhile), else the path the
// OS reports.
func selfExe() (string, error) {
	if runtime.GOOS == "linux" {
		return "/proc/self/exe", nil
	}
	return os.Executable()
}

// supervisorConn is toolgate's end of the supervisor: the write end of
// its stdin, and the registrations it holds.
type supervisorConn struct {
	cmd   *exec.Cmd
	pipe  *os.File
	lines map[string]bool
}

// registerLocked tells the supervisor about a cell ("c <cgroup dir>" or
// "g <pgid>"), starting it first if none runs. m.mu is held.
func (m *Manager) registerLocked(line string) error {
	if !supervisable.Load() {
		return nil // this binary did not call RunSupervisorIfAsked
	}
	if m.sup == nil {
		s, err := startSupervisor(nil)
		if err != nil {
			return fmt.Errorf("start the supervisor that ends servers if toolgate is killed: %w", err)
		}
		m.sup = s
	}
	if _, err := io.WriteString(m.sup.pipe, "+"+line+"\n"); err != nil {
		// It died (someone killed it): reap it and start another that
		// knows every registration.
		old := m.sup
		m.sup = nil
		_ = old.pipe.Close()
		_ = old.cmd.Wait()
		s, serr := startSupervisor(old.lines)
		if serr != nil {
			return fmt.Errorf("register with the supervisor: %w; start another: %w", err, serr)
		}
		m.sup = s
		if _, err := io.WriteString(s.pipe, "+"+line+"\n"); err != nil {
			return fmt.Errorf("register with the supervisor: %w", err)
		}
	}
	m.sup.lines[line] = true
	return nil
}

// unregisterLocked withdraws a registration; with none left the
// supervisor is told to exit (EOF with nothing registered) and reaped.
func (m *Manager) unregisterLocked(line string) error {
	s := m.sup
	if s == nil || !s.lines[line] {
		return nil
	}
	delete(s.lines, line)
	_, werr := io.WriteString(s.pipe, "-"+line+"\n")
	if len(s.lines) > 0 {
		return werr
	}
	m.sup = nil
	cerr := s.pipe.Close()
	if err := s.cmd.Wait(); err != nil {
		return fmt.Errorf("supervisor: %w", err)
	}
	if werr != nil {
		return werr
	}
	return cerr
}

// startSupervisor starts a supervisor that already holds lines.
func startSupervisor(lines map[string]bool) (*supervisorConn, error) {
	exe, err := selfExe()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Args = []string{"toolgate-supervisor"}
	cmd.Env = []string{roleEnv + "=supervisor"}
	cmd.Dir = "/"
	cmd.Stdin = r
	// Its own group: a Ctrl-C or a signal to toolgate's group must not
	// end it before toolgate has stopped its servers. No Pdeathsig: it
	// exists to outlive toolgate's death.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	_ = r.Close()
	if err != nil {
		_ = w.Close()
		return nil, err
	}
	s := &supervisorConn{cmd: cmd, pipe: w, lines: map[string]bool{}}
	for line := range lines {
		if _, err := io.WriteString(w, "+"+line+"\n"); err != nil {
			_ = w.Close()
			_ = cmd.Wait()
			return nil, err
		}
		s.lines[line] = true
	}
	return s, nil
}

// runSupervisor reads registrations until EOF. EOF with registrations
// left means the process that started it died: it ends every registered
// cell and exits. It never starts anything, so once that is done nothing
// of it remains.
func runSupervisor(in io.Reader) int {
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP)
	cgroups := map[string]bool{}
	groups := map[int]bool{}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		line := sc.Text()
		if len(line) < 3 {
			continue
		}
		add := line[0] == '+'
		kind, arg := line[1], line[3:]
		switch kind {
		case 'c':
			if add {
				cgroups[arg] = true
			} else {
				delete(cgroups, arg)
			}
		case 'g':
			if pgid, err := strconv.Atoi(arg); err == nil && pgid > 1 {
				if add {
					groups[pgid] = true
				} else {
					delete(groups, pgid)
				}
			}
		}
	}
	if len(cgroups) == 0 && len(groups) == 0 {
		return 0
	}
	endAll(cgroups, groups)
	return 0
}
