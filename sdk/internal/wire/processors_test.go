package wire_test

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/sdk/internal/wire"
)

// processorsChild, when set, makes this test binary a plugin process that
// reports its GOMAXPROCS after ServeOnOneProcessor.
const processorsChild = "TOOLGATE_TEST_PROCESSORS_CHILD"

func TestServeOnOneProcessor(t *testing.T) {
	if os.Getenv(processorsChild) != "" {
		wire.ServeOnOneProcessor()
		fmt.Printf("GOMAXPROCS=%d\n", runtime.GOMAXPROCS(0))
		return
	}
	for _, tc := range []struct {
		name, env, want string
	}{
		{"by default one processor", "", "GOMAXPROCS=1"},
		{"the environment decides when set", "GOMAXPROCS=3", "GOMAXPROCS=3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestServeOnOneProcessor$")
			cmd.Env = append(os.Environ(), processorsChild+"=1")
			if tc.env != "" {
				cmd.Env = append(cmd.Env, tc.env)
			} else {
				cmd.Env = withoutVar(cmd.Env, "GOMAXPROCS")
			}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if !strings.Contains(string(out), tc.want+"\n") {
				t.Fatalf("child printed %q, want %q", out, tc.want)
			}
		})
	}
}

func withoutVar(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}
