package launch

import (
	"context"
	"errors"
	"io"
)

// Spec describes one stdio MCP server process.
type Spec struct {
	// Server is the server's config name; used only for logs and errors.
	Server string
	// Command is the program to run. A bare name is looked up in the PATH
	// of Env (falling back to the host's PATH); a path is used as is.
	Command string
	Args    []string
	// Env is the complete environment of the child as KEY=VALUE pairs.
	// The launcher adds nothing: build it with [BuildEnv].
	Env []string
	// Dir is the working directory; "" means the launcher's default.
	Dir string
	// RemoteEnv names variables read on the executor's side (env_vars with
	// source = "remote"). Only launchers that run servers elsewhere accept
	// them; the local launcher refuses a spec that has any.
	RemoteEnv []string
}

// Process is a running stdio server as the MCP client sees it: whatever
// launcher started it (the built-in local one or a launcher plugin).
//
// Read returns the child's stdout; Write feeds its stdin. Close starts the
// shutdown sequence (close stdin, then signals) and returns once the
// process has exited; it is idempotent and safe to call concurrently with
// Read and Write, which then fail.
type Process interface {
	io.ReadWriteCloser
	// Stderr returns the child's stderr stream. It reaches EOF when the
	// child exits. Callers must drain it, or the child may block, and
	// must call it before Close: a stream nobody has asked for by then is
	// closed unread.
	Stderr() io.Reader
	// Wait blocks until the child exits and returns its exit error (nil on
	// exit status 0), or ctx's error.
	Wait(ctx context.Context) error
	// Kill ends the child (and its process group, where there is one)
	// at once, without the graceful sequence.
	Kill() error
	// Pid is the child's process id as the launcher knows it (for a remote
	// executor it is the local helper's pid, or 0 when there is none).
	Pid() int
}

// Launcher starts stdio server processes. The built-in [Local] launcher
// and launcher plugins implement it.
//
// The ctx bounds only the start; the process lives until Close or Kill.
type Launcher interface {
	Launch(ctx context.Context, spec Spec) (Process, error)
}

// ErrStart is matched by errors a launcher returns when the process could
// not be started at all (command not found, executor refused, …).
var ErrStart = errors.New("starting server process")
