//go:build unix

package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/toolgate/toolgate/host/cli"
)

// aliveWhenWritten records, at its first write, whether the process whose
// pid heads the line in pidFile (mcp-demo --spawn-family) still runs.
type aliveWhenWritten struct {
	t       *testing.T
	pidFile string

	mu      sync.Mutex
	buf     bytes.Buffer
	checked bool
	alive   bool
}

func (w *aliveWhenWritten) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.checked {
		w.checked = true
		line, err := os.ReadFile(w.pidFile)
		if err != nil {
			w.t.Errorf("read the server's pid: %v", err)
		} else if pid, err := strconv.Atoi(strings.Fields(string(line))[0]); err != nil {
			w.t.Errorf("server pid %q: %v", line, err)
		} else {
			w.alive = syscall.Kill(pid, 0) == nil
		}
	}
	return w.buf.Write(p)
}

// TestServersPrintsBeforeStopping: `toolgate servers` prints its table
// once every server settled, while the servers still run; stopping them
// (seconds for one that ignores SIGTERM) comes after. The ready server's
// process must be alive when the first byte of the table is written.
func TestServersPrintsBeforeStopping(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	cfg := writeConfig(t, `server "up" {
  command = "MCP_DEMO"
  args    = ["--spawn-family", "`+pidFile+`"]
}
server "hung" {
  command             = "MCP_DEMO"
  args                = ["--hang-initialize", "--ignore-sigterm"]
  startup_timeout_sec = 1
}`)
	out := &aliveWhenWritten{t: t, pidFile: pidFile}
	var errb bytes.Buffer
	code := cli.Run(t.Context(), []string{"servers", "--config", cfg}, cli.IO{
		In: strings.NewReader(""), Out: out, Err: &errb, LookupEnv: noUserConfig,
	})
	if code != cli.ExitDegraded || !strings.Contains(out.buf.String(), "timed out") {
		t.Fatalf("servers: exit %d, want %d with the hung server's timeout\nstdout:\n%s\nstderr:\n%s", code, cli.ExitDegraded, out.buf.String(), errb.String())
	}
	if !out.alive {
		t.Error("the table was printed after the servers were stopped; want it as soon as every server settled")
	}
}
