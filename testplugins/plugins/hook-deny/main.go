// Command hook-deny is a test hook that blocks and denies every call with
// "denied by hook-deny" (TOOLGATE_TEST_DENY_EVENTS narrows the events).
package main

import (
	"github.com/toolgate/toolgate/sdk/hook"
	"github.com/toolgate/toolgate/testplugins/plugins/internal/fixture"
)

func main() { hook.Serve(fixture.NewDenyHook()) }
