package launch

import (
	"context"
	"os/exec"
)

// start starts cmd from the spawner's locked thread (see spawner.go), so
// that the Pdeathsig its cell set fires only when the host dies.
func (l *Local) start(ctx context.Context, cmd *exec.Cmd) (release func(), err error) {
	return l.spawner.start(ctx, cmd)
}
