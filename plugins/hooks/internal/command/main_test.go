package command_test

import (
	"os"
	"testing"

	"github.com/toolgate/toolgate/internal/testbin"
)

// binaryName is the plugin binary the tests run for real (testbin.Path).
const binaryName = "plugins/toolgate-hook-command"

func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }
