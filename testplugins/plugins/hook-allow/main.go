// Command hook-allow is a test hook that allows every call.
package main

import (
	"github.com/toolgate/toolgate/sdk/hook"
	"github.com/toolgate/toolgate/testplugins/plugins/internal/fixture"
)

func main() { hook.Serve(fixture.AllowHook{}) }
