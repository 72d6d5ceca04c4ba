// Command conformance-client is the client under test for the official MCP
// conformance suite; see package conformance.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/toolgate/toolgate/testplugins/conformance"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := conformance.Main(ctx, conformance.Process{Args: os.Args[1:], Getenv: os.Getenv, Stderr: os.Stderr})
	stop()
	os.Exit(code)
}
