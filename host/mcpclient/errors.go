package mcpclient

import (
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

type jsonrpcError = jsonrpc.Error

const codeMethodNotFound = jsonrpc.CodeMethodNotFound

var (
	// ErrNotReady is returned for requests sent before Connect succeeded.
	// Callers should wait for the server's startup to finish.
	ErrNotReady = errors.New("MCP client is not ready")
	// ErrClosed is returned for requests sent after Close. The caller
	// closed the client; a new one must be built.
	ErrClosed = errors.New("MCP client is closed")
)

// StartError is a failed connect: the handshake error plus what the
// server wrote to stderr, which usually says why.
type StartError struct {
	Err    error
	Stderr string // last lines of the server's stderr, "" when none
}

func (e *StartError) Error() string {
	if e.Stderr == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("%v; stderr: %s", e.Err, strings.TrimSpace(e.Stderr))
}

func (e *StartError) Unwrap() error { return e.Err }

// ExitError says a ready session ended without the host closing it: the
// server crashed or exited. The manager reports it and may restart.
type ExitError struct {
	Server string
	Err    error
	Stderr string // last lines of a stdio server's stderr (redacted), "" when none
}

func (e *ExitError) Error() string {
	if e.Stderr == "" {
		return fmt.Sprintf("MCP server %q stopped: %v", e.Server, e.Err)
	}
	return fmt.Sprintf("MCP server %q stopped: %v; stderr: %s", e.Server, e.Err, e.Stderr)
}

func (e *ExitError) Unwrap() error { return e.Err }
