//go:build !unix && !windows

package launch

import (
	"context"
	"fmt"
)

// Launch is not implemented on this OS: its guarantees (the child and its
// descendants die with the host and are ended together) need OS support
// this package does not have here. Run stdio servers through a launcher
// plugin.
func (l *Local) Launch(ctx context.Context, spec Spec) (Process, error) {
	return nil, fmt.Errorf("%w %q: the built-in local launcher does not support this OS; set the server's environment to one with a launcher plugin", ErrStart, spec.Server)
}
