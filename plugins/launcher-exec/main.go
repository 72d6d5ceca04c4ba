// Command toolgate-launcher-exec is toolgate's executor launcher plugin: it
// runs the stdio MCP servers of an environment locally, over ssh, or in a
// container, pod or allocation (docker, kubectl, nomad exec), or through a
// custom argv prefix. See package executor and
// docs/environments.md.
package main

import (
	"github.com/toolgate/toolgate/plugins/launcher-exec/internal/executor"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/launcher"
)

func main() {
	launcher.Serve(executor.New(executor.Options{Logger: sdk.NewLogger(executor.Name)}))
}
