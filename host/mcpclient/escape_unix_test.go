//go:build unix

package mcpclient

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/procwatch"
)

// TestCrashIsNoticedWhileAChildHoldsStdout: a server that dies while a
// child it started in a session of its own still holds its stdout is
// noticed by its exit: the call in flight fails at once with the crash
// report instead of hanging, and the session ends.
func TestCrashIsNoticedWhileAChildHoldsStdout(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	c := demoClient(t, "--spawn-escaping-child", pidFile, "--crash-tool")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	// Ending it is another issue's job (it escaped the process group);
	// here the test cleans up after itself.
	t.Cleanup(func() {
		_ = syscall.Kill(child, syscall.SIGKILL)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := procwatch.WaitGone(ctx, child); err != nil {
			t.Errorf("escaped child %d: %v", child, err)
		}
	})

	// The deadline only bounds a failing run: without the fix the call
	// waits for ever on a pipe the child keeps open.
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	_, err = c.CallTool(ctx, &mcp.CallToolParams{Name: "crash"}, CallOptions{})
	var ee *ExitError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("call in flight when the server died: %v, want its crash report", err)
	}
	select {
	case <-c.Done():
	case <-ctx.Done():
		t.Fatal("the session did not end after the server process exited")
	}
}
