// Command hook-garbage is a test hook whose answers break the protocol
// (no PreToolUse action, an unknown PermissionRequest decision).
package main

import (
	"github.com/toolgate/toolgate/sdk/hook"
	"github.com/toolgate/toolgate/testplugins/plugins/internal/fixture"
)

func main() { hook.Serve(fixture.GarbageHook{}) }
