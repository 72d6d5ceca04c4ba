// Command launcher-dies is a test launcher whose every process writes a
// line on stdout, after which the plugin kills itself (status 3) as soon
// as the host writes to the process or asks it to stop.
package main

import (
	"os"

	"github.com/toolgate/toolgate/sdk/launcher"
	"github.com/toolgate/toolgate/testplugins/plugins/internal/fixture"
)

func main() { launcher.Serve(fixture.DyingLauncher{Exit: os.Exit}) }
