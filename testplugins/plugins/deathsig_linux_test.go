//go:build linux

package plugins_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/launcher"
	"github.com/toolgate/toolgate/sdk/plugintest"
)

func TestLaunchedProcessDiesWithThePlugin(t *testing.T) {
	b, err := plugintest.StartBinary(t, bin("launcher-local"), sdk.KindLauncher, plugintest.BinaryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.Plugin.(*launcher.Client).Launch(t.Context(), launcher.Spec{
		// sleep ignores its stdin and writes nothing, so losing its pipes
		// does not end it: only Pdeathsig can.
		Server: "orphan-candidate", Command: "sleep", Args: []string{"600"},
		Env: map[string]string{"PATH": os.Getenv("PATH")},
	})
	if err != nil {
		t.Fatal(err)
	}
	child := p.Pid()
	if alive, err := isAlive(child); !alive {
		t.Fatalf("child %d not running after Launch: %v", child, err)
	}
	// SIGKILL leaves the plugin no chance to clean up: only Pdeathsig
	// can end the child.
	if err := syscall.Kill(b.Client.ReattachConfig().Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := waitDead(child, 10*time.Second); err != nil {
		_ = syscall.Kill(child, syscall.SIGKILL)
		t.Fatal(err)
	}
}

// isAlive reports whether pid names a process that has not exited
// (zombies count as exited).
func isAlive(pid int) (bool, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false, err
	}
	// The state follows the command name, which is in parentheses and may
	// contain anything.
	i := bytes.LastIndexByte(stat, ')')
	fields := strings.Fields(string(stat[i+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X", nil
}

// waitDead polls (there is no event for another process's death) until
// pid has exited or timeout passes.
func waitDead(pid int, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if alive, _ := isAlive(pid); !alive {
			return nil
		}
		select {
		case <-deadline.C:
			return fmt.Errorf("process %d still alive %v after its launcher plugin was killed", pid, timeout)
		case <-tick.C:
		}
	}
}
