// Command toolgate is the governed MCP host. All behaviour lives in
// package cli; main only wires signals and the process exit code.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/toolgate/toolgate/host/cli"
	"github.com/toolgate/toolgate/internal/contain"
)

func main() {
	// Re-executed as the supervisor that ends servers if toolgate is
	// killed, this process does that and exits here.
	contain.RunSupervisorIfAsked()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], cli.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}
