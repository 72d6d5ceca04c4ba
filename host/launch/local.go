package launch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/internal/contain"
)

// Defaults of the termination sequence (see the package documentation).
const (
	// DefaultStdinGrace is how long Close waits for a server to exit after
	// its stdin is closed before it sends SIGTERM to the process group.
	DefaultStdinGrace = 2 * time.Second
	// DefaultTermGrace is how long a process group gets after SIGTERM
	// before SIGKILL.
	DefaultTermGrace = 2 * time.Second
	// stderrDrainGrace bounds how long a reader of [Process.Stderr] may
	// still block after Close: only a descendant that left the process
	// group can still hold the pipe open by then.
	stderrDrainGrace = time.Second
)

// LocalOptions configures [NewLocal].
type LocalOptions struct {
	// Logger receives start and shutdown diagnostics (never env values or
	// args). Nil means no logging.
	Logger hclog.Logger
	// StdinGrace is the wait after closing stdin before SIGTERM; zero or
	// negative means [DefaultStdinGrace].
	StdinGrace time.Duration
	// TermGrace is the wait after SIGTERM before SIGKILL; zero or negative
	// means [DefaultTermGrace].
	TermGrace time.Duration
}

// Local is the built-in launcher: it runs stdio servers as children of the
// host on this machine, each in its own process group, dying with the host.
// An empty [Spec.Dir] means the host's working directory.
//
// A Local is safe for concurrent use. The zero value works like
// NewLocal(LocalOptions{}). It must not be copied after first use.
type Local struct {
	log        hclog.Logger
	stdinGrace time.Duration
	termGrace  time.Duration
	spawner    spawner
	// cells contains each server with everything it starts; nil means
	// the process-wide contain.Default().
	cells *contain.Manager
}

func (l *Local) containment() *contain.Manager {
	if l.cells == nil {
		return contain.Default()
	}
	return l.cells
}

// Containment names how servers started by the local launcher of this
// process are contained: "cgroup" or "subreaper" on Linux,
// "process-group" on other Unixes, "job-object" on Windows (see
// internal/contain). Deciding it may create and remove an empty cgroup.
func Containment() string {
	kind, _ := contain.Default().Kind()
	return string(kind)
}

var _ Launcher = (*Local)(nil)

// NewLocal returns a local launcher with opts' zero values replaced by the
// documented defaults.
func NewLocal(opts LocalOptions) *Local {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	return &Local{
		log:        opts.Logger,
		stdinGrace: positiveOr(opts.StdinGrace, DefaultStdinGrace),
		termGrace:  positiveOr(opts.TermGrace, DefaultTermGrace),
	}
}

func (l *Local) logger() hclog.Logger {
	if l.log == nil {
		return hclog.NewNullLogger()
	}
	return l.log
}

// positiveOr lets a zero Local (not built by NewLocal) work too.
func positiveOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// checkDir reports a working directory the child could not start in.
func checkDir(server, dir string) error {
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w %q: working directory %q does not exist; set cwd to an existing directory", ErrStart, server, dir)
	case err != nil:
		return fmt.Errorf("%w %q: use working directory %q: %w; set cwd to a directory the host can enter", ErrStart, server, dir, err)
	case !info.IsDir():
		return fmt.Errorf("%w %q: working directory %q is not a directory; set cwd to a directory", ErrStart, server, dir)
	}
	return nil
}
