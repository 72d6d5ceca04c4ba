// Command hook-stdout is a test hook that prints to stdout before it
// serves, which breaks the go-plugin handshake.
package main

import (
	"fmt"

	"github.com/toolgate/toolgate/sdk/hook"
	"github.com/toolgate/toolgate/testplugins/plugins/internal/fixture"
)

func main() {
	fmt.Println(fixture.StdoutNoise)
	hook.Serve(fixture.AllowHook{})
}
