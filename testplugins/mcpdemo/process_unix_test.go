//go:build unix

package mcpdemo

import (
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestProcessIgnoreSIGTERM(t *testing.T) {
	cmd, _ := demoCommand(t, "--ignore-sigterm")
	cs, err := connectProcess(t, testCtx(t), cmd, legacyVersion)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Still serving after SIGTERM.
	res, err := cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "alive"}})
	if err != nil || onlyText(t, res) != "alive" {
		t.Fatalf("echo after SIGTERM = %+v, %v", res, err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cs.Close()
	if status, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || status.Signal() != syscall.SIGKILL {
		t.Errorf("process ended with %v, want SIGKILL", cmd.ProcessState)
	}
}
