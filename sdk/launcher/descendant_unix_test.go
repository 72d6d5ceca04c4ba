//go:build unix

package launcher_test

import (
	"bufio"
	"fmt"
	"io"
	"syscall"
	"testing"

	"github.com/toolgate/toolgate/sdk/launcher"
)

// TestDescendantHoldingStdout: a process that exits leaving a descendant
// with its stdout open still ends: reads reach EOF (a short grace after
// the exit) instead of waiting for the descendant.
func TestDescendantHoldingStdout(t *testing.T) {
	forEachMode(t, func(t *testing.T, m ioMode) {
		p := launch(t, m.opts(launcher.ClientOptions{}), "spawn-holder")
		r := bufio.NewReader(p)
		line, err := r.ReadString('\n')
		var holder int
		if _, scanErr := fmt.Sscanf(line, "holder %d\n", &holder); scanErr != nil {
			t.Fatalf("first line %q, %v", line, err)
		}
		t.Cleanup(func() { _ = syscall.Kill(holder, syscall.SIGKILL) })
		if err := p.Wait(t.Context()); err != nil {
			t.Errorf("Wait: %v", err)
		}
		// The descendant must still hold stdout when the process has
		// exited, or the EOF below proves nothing. Checked here, not after
		// the read: once the process exited, its cell ends what it left
		// behind after a grace, which a loaded machine may reach first.
		if err := syscall.Kill(holder, 0); err != nil {
			t.Errorf("the descendant holding stdout is gone (%v) when the process exited: this test proves nothing", err)
		}
		if rest, err := io.ReadAll(r); err != nil || len(rest) != 0 {
			t.Errorf("reading stdout to the end: %q, %v; want EOF", rest, err)
		}
	})
}
