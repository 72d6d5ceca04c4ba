// Command launcher-local is a well-behaved test launcher that runs every
// process on this machine.
package main

import (
	"github.com/toolgate/toolgate/sdk/launcher"
	"github.com/toolgate/toolgate/testplugins/plugins/internal/fixture"
)

func main() { launcher.Serve(fixture.LocalLauncher{}) }
