package main

import (
	"github.com/toolgate/toolgate/plugins/hooks/internal/command"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/hook"
)

func main() { hook.Serve(command.New(sdk.NewLogger("toolgate-hook-command"))) }
