package main

import (
	"github.com/toolgate/toolgate/plugins/hooks/internal/policy"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/hook"
)

func main() { hook.Serve(policy.New(sdk.NewLogger("toolgate-hook-policy"))) }
