package launcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Launcher starts processes. Plugins implement it; the host-side [Client]
// implements it too.
type Launcher interface {
	// Start starts the process spec describes. ctx bounds the start; in the
	// plugin it is also the stream's context, done when the host abandons
	// the process (the shim then kills the process anyway).
	//
	// An error means the process could not be started: return a
	// [*StartError] to say why (its Kind and StderrExcerpt reach the user);
	// other errors are classified from their wrapped causes
	// (fs.ErrNotExist, exec.ErrNotFound: not found; fs.ErrPermission:
	// permission).
	Start(ctx context.Context, spec Spec) (Process, error)
}

// Spec describes a process to start.
type Spec struct {
	// Server is the name of the server block; for logs and errors only.
	Server string
	// Command is the program: a path, or a name to look up in PATH.
	Command string
	// Args are the arguments, without the program itself.
	Args []string
	// Env is the complete environment of the process; the launcher adds
	// nothing of its own.
	Env map[string]string
	// Dir is the working directory; "" means the launcher's default.
	Dir string
	// RemoteEnv names variables read on the executor's side (env_vars with
	// source = "remote"); their values never pass through the host. A
	// launcher that cannot forward them must fail the start.
	RemoteEnv []string
}

// Environ returns Env as sorted KEY=VALUE pairs, the form os/exec wants.
func (s Spec) Environ() []string {
	out := make([]string, 0, len(s.Env))
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		out = append(out, k+"="+s.Env[k])
	}
	return out
}

// EnvMap turns KEY=VALUE pairs into a [Spec.Env]; a later entry for the
// same key wins, as it does for os/exec. Entries without "=" are dropped.
func EnvMap(environ []string) map[string]string {
	env := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

// Process is a started process, as a launcher plugin returns it from
// Start ([StartCommand] builds one from an *exec.Cmd). The host-side
// [*RemoteProcess] implements it too.
//
// Stdin, Stdout and Stderr must return the same value on every call. The
// shim reads Stdout and Stderr until EOF, writes Stdin, calls Signal
// when the host asks, and calls Wait. Once the process has exited and
// both outputs reached EOF (or a short grace later), the shim closes
// Stdin, and Stdout and Stderr when they are io.Closers.
//
// When Stdin, Stdout and Stderr are all *os.File pipes, the shim may pass
// them to the host instead (see "Passing the pipes" in the package doc):
// it then closes them at once and never reads or writes them, and nothing
// else in the plugin may either. A Process that must see its I/O (to scan,
// log or rewrite it) must therefore not return the *os.File values
// themselves; wrapping one in any other type keeps the process on the
// stream.
type Process interface {
	// Stdin is the process's standard input.
	Stdin() io.WriteCloser
	// Stdout is the process's standard output; it reaches EOF when the
	// process (and everything that inherited it) has closed it.
	Stdout() io.Reader
	// Stderr is the process's standard error, like Stdout.
	Stderr() io.Reader
	// Signal asks the process to end (SignalTerm) or ends it (SignalKill).
	// Signalling a process that already exited is not an error.
	Signal(sig Signal) error
	// Wait blocks until the process exited and returns nil for exit status
	// 0, a [*ExitError] otherwise, or ctx's error.
	Wait(ctx context.Context) error
	// Pid is the process id as the launcher knows it (0 if none).
	Pid() int
}

// Stopper is a [Process] that ends itself when the host stops it: close
// stdin, wait stdinGrace for the exit, SIGTERM, wait termGrace, SIGKILL,
// returning once it has exited (or ctx ended, which skips to SIGKILL).
// [StartCommand]'s processes are Stoppers; for any other Process the shim
// takes the same steps (internal/contain's sequence, said once) through
// Stdin().Close and Signal. A Process that wraps a Stopper should forward
// Stop, so that the wrapped one's sequence runs.
type Stopper interface {
	Stop(ctx context.Context, stdinGrace, termGrace time.Duration) error
}

// Signal is a request to end a process.
type Signal int

// Signals. The zero value is SignalTerm.
const (
	// SignalTerm asks the process to exit (SIGTERM).
	SignalTerm Signal = iota
	// SignalKill ends it at once (SIGKILL).
	SignalKill
)

func (s Signal) String() string {
	switch s {
	case SignalTerm:
		return "SIGTERM"
	case SignalKill:
		return "SIGKILL"
	}
	return fmt.Sprintf("Signal(%d)", int(s))
}

// ExitError reports a process that did not exit with status 0.
type ExitError struct {
	// Code is the exit status; -1 when a signal ended the process or the
	// status is unknown.
	Code int
	// Signal names the signal that ended the process, e.g. "SIGKILL"; ""
	// when it exited by itself.
	Signal string
	// Message describes an end that was not a plain exit; "" otherwise.
	Message string
}

func (e *ExitError) Error() string {
	var s string
	if e.Signal != "" {
		s = "killed by " + e.Signal
	} else {
		s = "exit status " + strconv.Itoa(e.Code)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// ErrStart is matched (errors.Is) by every [*StartError].
var ErrStart = errors.New("starting process")

// ErrorKind classifies a start failure so that the host can say how to
// fix it.
type ErrorKind int

// Error kinds. The zero value is KindOther.
const (
	// KindOther is any other failure.
	KindOther ErrorKind = iota
	// KindNotFound: the command (or the executor's program) does not exist.
	KindNotFound
	// KindPermission: not allowed to run it.
	KindPermission
	// KindExecutor: the executor (ssh, docker, kubectl, ...) failed before
	// the command ran.
	KindExecutor
)

func (k ErrorKind) String() string {
	switch k {
	case KindOther:
		return "other"
	case KindNotFound:
		return "not found"
	case KindPermission:
		return "permission denied"
	case KindExecutor:
		return "executor failed"
	}
	return fmt.Sprintf("ErrorKind(%d)", int(k))
}

// StartError says why a process could not be started.
type StartError struct {
	Kind ErrorKind
	// Message says what failed and how to fix it, without secrets.
	Message string
	// StderrExcerpt is the start of what the executor wrote to stderr
	// before it gave up (the shim keeps at most [MaxStderrExcerpt] bytes).
	StderrExcerpt string
}

// MaxStderrExcerpt bounds [StartError.StderrExcerpt] on the wire.
const MaxStderrExcerpt = 4 << 10

func (e *StartError) Error() string {
	s := "starting process (" + e.Kind.String() + "): " + e.Message
	if e.StderrExcerpt != "" {
		s += "; stderr: " + strings.TrimSpace(e.StderrExcerpt)
	}
	return s
}

// Is makes every StartError match [ErrStart].
func (e *StartError) Is(target error) bool { return target == ErrStart }
