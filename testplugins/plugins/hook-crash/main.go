// Command hook-crash is a test hook that exits (status 3) during its Nth
// call: crash_after from its config, else TOOLGATE_TEST_CRASH_AFTER, else 1.
package main

import (
	"os"

	"github.com/toolgate/toolgate/sdk/hook"
	"github.com/toolgate/toolgate/testplugins/plugins/internal/fixture"
)

func main() { hook.Serve(fixture.NewCrashHook(os.Exit)) }
