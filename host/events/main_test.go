package events

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// helperEnv makes the test binary act as a host process that writes an
// audit log, so tests can SIGKILL a real process (go-style R32a).
const helperEnv = "TOOLGATE_EVENTS_TEST_HELPER"

func TestMain(m *testing.M) {
	switch mode := os.Getenv(helperEnv); mode {
	case "":
		goleak.VerifyTestMain(m)
	case helperEmitThenKill:
		emitThenKill()
	case helperEmitUntilKilled:
		emitUntilKilled()
	case helperEmitThenClose:
		emitThenClose()
	default:
		fmt.Fprintf(os.Stderr, "unknown %s mode %q\n", helperEnv, mode)
		os.Exit(2)
	}
}
