package hook_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/sdk/hook"
)

// denyDeletes is a complete permission hook: it denies every tool whose
// name starts with "delete" and leaves every other call to the next step
// of the approval chain. hook.Base answers the events it does not
// implement; Events tells the host to send only PermissionRequest.
type denyDeletes struct{ hook.Base }

func (denyDeletes) Events() []hook.Event { return []hook.Event{hook.EventPermissionRequest} }

func (denyDeletes) PermissionRequest(_ context.Context, req hook.Request) (hook.PermissionResult, error) {
	if strings.HasPrefix(req.Tool, "delete") {
		return hook.Deny("deleting is not allowed here; ask the user to do it"), nil
	}
	return hook.NoDecision(), nil
}

// A hook plugin is a type with the methods above and a main that serves it:
//
//	func main() { hook.Serve(denyDeletes{}) }
//
// Here the plugin is asked what toolgate asks it before a call runs. To
// test it over the real gRPC connection, use sdk/plugintest.Hook.
func Example() {
	var h hook.Hook = denyDeletes{}
	for _, tool := range []string{"delete_file", "read_file"} {
		res, err := h.PermissionRequest(context.Background(), hook.Request{Server: "files", Tool: tool})
		fmt.Printf("%s: %v %q %v\n", tool, res.Decision, res.Message, err)
	}
	// Output:
	// delete_file: deny "deleting is not allowed here; ask the user to do it" <nil>
	// read_file: none "" <nil>
}
