// Command hook-oldproto is a test hook built against another protocol: it
// serves only go-plugin version 99 and reports API version "0".
package main

import (
	"github.com/hashicorp/go-plugin"

	"github.com/toolgate/toolgate/testplugins/plugins/internal/fixture"
)

func main() { plugin.Serve(fixture.OldProtocolServeConfig()) }
