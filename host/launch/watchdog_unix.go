//go:build unix

package launch

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// errNoWaitInPlace says the OS cannot wait for a child without reaping it.
var errNoWaitInPlace = errors.New("waiting without reaping is not supported on this OS")

// watchdogScript is the whole watchdog: it blocks reading its stdin, a pipe
// whose only writer is the host. "done" means the server's group is gone
// and nothing is left to do. EOF without it means the host died (the
// kernel closes a dead process's descriptors, SIGKILL included): the
// watchdog then SIGKILLs the server's process group, as Pdeathsig would on
// Linux. Terminal signals are ignored so that a Ctrl-C, which the host
// handles by shutting servers down in order, cannot end the watchdog first.
const watchdogScript = `trap '' INT HUP
IFS= read -r line
[ "$line" = done ] || kill -s KILL -- "-$1" 2>/dev/null
exit 0`

// watchdog ends one server's process group when the host dies, on systems
// without a parent-death signal. It is a /bin/sh process (present on every
// Unix, so nothing extra ships with toolgate) in a process group of its
// own, holding the read end of a pipe; the host holds the write end.
type watchdog struct {
	cmd  *exec.Cmd
	pipe *os.File // the host's (write) end
}

// startWithWatchdog starts cmd (already set up with Setpgid) and then its
// watchdog. Should the watchdog fail to start, the server is killed: a
// server that would outlive the host must not run.
//
// Between cmd.Start and the watchdog's start (microseconds) a SIGKILLed
// host would leave the server behind; the server then still sees EOF on
// its stdin, which asks any MCP stdio server to exit.
func startWithWatchdog(cmd *exec.Cmd) (release func(), dog *watchdog, err error) {
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	dog, err = startWatchdog(cmd.Process.Pid)
	if err != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		return nil, nil, fmt.Errorf("start the watchdog that ends the server with the host: %w", err)
	}
	return func() {}, dog, nil
}

func startWatchdog(pgid int) (*watchdog, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("/bin/sh", "-c", watchdogScript, "toolgate-watchdog", strconv.Itoa(pgid))
	cmd.Stdin = r
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	_ = r.Close()
	if err != nil {
		_ = w.Close()
		return nil, err
	}
	return &watchdog{cmd: cmd, pipe: w}, nil
}

// release tells the watchdog that the server's group is gone and reaps it.
// It is a no-op on a nil watchdog (where the kernel does the job).
func (d *watchdog) release() error {
	if d == nil {
		return nil
	}
	_, werr := d.pipe.Write([]byte("done\n"))
	cerr := d.pipe.Close()
	if err := d.cmd.Wait(); err != nil {
		return fmt.Errorf("watchdog: %w", err)
	}
	return errors.Join(werr, cerr)
}
