// Command sdk-floor is the go-sdk yardstick of toolgate's gateway
// benchmarks: one stdio server behind go-sdk's Streamable HTTP server,
// each call forwarded with ClientSession.CallTool (package sdkfloor).
//
//	sdk-floor --http 127.0.0.1:0 -- mcp-demo --name demo
//
// It prints "listening on http://ADDR/mcp" to stderr once it is ready.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/toolgate/toolgate/testplugins/sdkfloor"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sdk-floor:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("http", "127.0.0.1:0", "address to listen on")
	flag.Parse()
	if flag.NArg() == 0 {
		return errors.New("usage: sdk-floor [--http ADDR] -- SERVER [ARGS...]")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f, err := sdkfloor.Start(ctx, flag.Args())
	if err != nil {
		return err
	}
	defer f.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", f.Handler())
	srv := &http.Server{Handler: mux}
	go func() {
		<-ctx.Done()
		_ = srv.Shutdown(context.Background())
	}()
	fmt.Fprintf(os.Stderr, "listening on http://%s/mcp\n", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
