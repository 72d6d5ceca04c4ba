package execution_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolgate/toolgate/internal/contain"
	"github.com/toolgate/toolgate/internal/testbin"
)

// TestMain checks for leaked goroutines after the binaries testbin built
// are removed; goleak.VerifyTestMain would exit before that cleanup.
func TestMain(m *testing.M) {
	contain.RunSupervisorIfAsked()
	code := m.Run()
	testbin.Cleanup()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
