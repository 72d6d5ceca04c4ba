package main

import (
	"github.com/toolgate/toolgate/plugins/guardian/internal/reviewer"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/guardian"
)

func main() {
	guardian.Serve(reviewer.New(reviewer.Options{Logger: sdk.NewLogger("toolgate-guardian")}))
}
