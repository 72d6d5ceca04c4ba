// Command denydeletes is the hook plugin the plugintest examples build and
// run: it denies every tool whose name starts with "delete".
package main

import (
	"context"
	"strings"

	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/hook"
)

type denyDeletes struct{ hook.Base }

func (denyDeletes) Identity() sdk.Identity {
	return sdk.Identity{Name: "deny-deletes", Version: "1.0.0"}
}

func (denyDeletes) Events() []hook.Event { return []hook.Event{hook.EventPermissionRequest} }

func (denyDeletes) PermissionRequest(_ context.Context, req hook.Request) (hook.PermissionResult, error) {
	if strings.HasPrefix(req.Tool, "delete") {
		return hook.Deny("deleting is not allowed here; ask the user to do it"), nil
	}
	return hook.NoDecision(), nil
}

func main() { hook.Serve(denyDeletes{}) }
