package pluginhost

import (
	"context"
	"fmt"

	"github.com/toolgate/toolgate/host/launch"
	"github.com/toolgate/toolgate/sdk/launcher"
)

// Launcher adapts a launcher plugin serving one environment to
// launch.Launcher. Its processes are the SDK's *launcher.RemoteProcess,
// which has exactly the method set of launch.Process.
//
// Each (plugin, environment) pair has its own plugin process, because a
// plugin is configured per process and the configuration comes from the
// environment block. If that process dies, every server process it ran
// ends too (their reads fail with an error matching sdk.ErrPluginExited)
// and the next Launch starts a fresh plugin process, with backoff.
//
// A Launcher is safe for concurrent use.
type Launcher struct {
	in *instance
}

var (
	_ launch.Launcher = (*Launcher)(nil)
	_ launch.Process  = (*launcher.RemoteProcess)(nil)
)

// Launch starts spec's process through the plugin, starting the plugin
// first if needed. ctx bounds only the start. Every error matches
// launch.ErrStart: a process the plugin could not start also matches
// launcher.ErrStart (a *launcher.StartError says why), and a plugin that
// could not be started matches this package's errors (ErrGivenUp, ...).
func (l *Launcher) Launch(ctx context.Context, spec launch.Spec) (launch.Process, error) {
	p, err := l.in.acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w %q: launcher plugin %q: %w", launch.ErrStart, spec.Server, l.in.name, err)
	}
	c, ok := p.plugin.(*launcher.Client)
	if !ok {
		return nil, fmt.Errorf("%w %q: %w: plugin %q is not a launcher (got %T)", launch.ErrStart, spec.Server, ErrIncompatible, l.in.name, p.plugin)
	}
	proc, err := c.Launch(ctx, launcher.Spec{
		Server:  spec.Server,
		Command: spec.Command,
		Args:    spec.Args,
		Env:     launcher.EnvMap(spec.Env),
		Dir:     spec.Dir,
	})
	if err != nil {
		err = withExit(p, err)
		return nil, fmt.Errorf("%w %q: launcher plugin %q: %w", launch.ErrStart, spec.Server, l.in.name, err)
	}
	return proc, nil
}
