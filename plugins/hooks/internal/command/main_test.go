package command_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolgate/toolgate/plugins/internal/testbinary"
)

// binary is the path of toolgate-hook-command, built once by TestMain.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "toolgate-hook-command-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := 1
	binary, err = testbinary.Locate("toolgate-hook-command", "github.com/toolgate/toolgate/plugins/hooks/command", dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		goleak.VerifyTestMain(m, goleak.Cleanup(func(c int) { code = c }))
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
