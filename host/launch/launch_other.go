//go:build !linux

package launch

import (
	"context"
	"fmt"
)

// Launch is only implemented on Linux: the guarantees this launcher makes
// (the child dies with the host through Pdeathsig, its process group is
// ended with it) need Linux. Elsewhere, run stdio servers through a
// launcher plugin.
func (l *Local) Launch(ctx context.Context, spec Spec) (Process, error) {
	return nil, fmt.Errorf("%w %q: the built-in local launcher needs Linux; set the server's environment to one with a launcher plugin", ErrStart, spec.Server)
}
