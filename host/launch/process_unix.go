//go:build unix

package launch

import (
	"context"
	"os/exec"

	"github.com/toolgate/toolgate/internal/contain"
)

// startOS starts cmd in a cell of its own (internal/contain: the process
// group, and a cgroup or the subreaper's walk on Linux, the supervisor on
// other Unixes), from the spawner's thread on Linux.
func (l *Local) startOS(ctx context.Context, spec Spec, _ string, cmd *exec.Cmd, opts contain.StartOptions) (*contain.Process, error) {
	cell, err := l.containment().NewCell(spec.Server)
	if err != nil {
		l.logger().Warn("server runs with weaker containment", "server", spec.Server, "error", err)
	}
	opts.Start = func(cmd *exec.Cmd) (func(), error) { return l.start(ctx, cmd) }
	return cell.Start(cmd, opts)
}
