package cli_test

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/cli"
	"github.com/toolgate/toolgate/host/gateway"
)

// TestServeStdioCapsMessages: a stdio client line longer than
// gateway.MaxMessageBytes ends the connection (and toolgate serve, whose
// only client it is) instead of being buffered whole.
func TestServeStdioCapsMessages(t *testing.T) {
	cfg := filepath.Join(exampleDir(t), "config.hcl.example")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := cli.Run(t.Context(), []string{"serve", "--config", cfg}, cli.IO{In: inR, Out: outW, Err: &stderr, LookupEnv: noUserConfig})
		_ = outW.Close()
		_ = inR.Close()
		done <- code
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	huge := fmt.Sprintf(`{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"mcp__demo__echo","arguments":{"text":%q}}}`+"\n",
		strings.Repeat("x", gateway.MaxMessageBytes+1))
	go func() { _, _ = io.WriteString(inW, huge) }()
	select {
	case <-done:
		// go-sdk ends the connection at the limit, as at end of input.
	case <-time.After(60 * time.Second):
		t.Fatalf("toolgate serve accepted a message of more than %d bytes and kept serving", gateway.MaxMessageBytes)
	}
}
