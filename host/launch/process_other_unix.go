//go:build unix && !linux

package launch

import (
	"context"
	"os/exec"
)

// start starts cmd. This OS has no Pdeathsig: the cell registers the
// process group with the supervisor, which kills it if the host dies.
func (l *Local) start(_ context.Context, cmd *exec.Cmd) (release func(), err error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return func() {}, nil
}
