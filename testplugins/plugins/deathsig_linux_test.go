//go:build linux

package plugins_test

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/procwatch"
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
	if !procwatch.Alive(child) {
		t.Fatalf("child %d not running after Launch", child)
	}
	// SIGKILL leaves the plugin no chance to clean up: only Pdeathsig
	// can end the child.
	if err := syscall.Kill(b.Client.ReattachConfig().Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := procwatch.WaitGone(ctx, child); err != nil {
		_ = syscall.Kill(child, syscall.SIGKILL)
		t.Fatalf("after its launcher plugin was killed: %v", err)
	}
}
