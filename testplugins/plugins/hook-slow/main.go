// Command hook-slow is a test hook that never answers before the host's
// deadline.
package main

import (
	"github.com/toolgate/toolgate/sdk/hook"
	"github.com/toolgate/toolgate/testplugins/plugins/internal/fixture"
)

func main() { hook.Serve(fixture.SlowHook{}) }
