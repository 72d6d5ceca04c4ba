package environment

import (
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/launch"
)

// Target is a resolved environment: what starts the process and how.
type Target struct {
	Name string
	// Launcher starts the server's process.
	Launcher launch.Launcher
	// LauncherName is "local" or the launcher plugin's name (for display).
	LauncherName string
	// Remote is true when the process may run on another machine: its
	// environment is built from explicit entries only.
	Remote bool
	// Cwd is the working directory a server without cwd gets ("" = the
	// launcher's default).
	Cwd string
}

// ErrUnknown is matched by Resolve errors for an environment no block
// defines. The server block must name a defined environment.
var ErrUnknown = errors.New("unknown environment")

// ErrNoLauncher is matched by Resolve errors for an environment whose
// launcher cannot be used.
var ErrNoLauncher = errors.New("environment has no usable launcher")

// Options configures a Registry.
type Options struct {
	// Local is the built-in launcher. Required.
	Local launch.Launcher
	// Plugin returns the launcher served by the named launcher plugin for
	// the given environment block (whose config {} it is handed). nil
	// means no launcher plugins are available.
	Plugin func(plugin string, env config.Environment) (launch.Launcher, error)
}

// Registry resolves environment names.
type Registry struct {
	envs map[string]config.Environment
	opts Options
}

// New builds a registry over the environment blocks of cfg.
func New(cfg *config.Config, opts Options) *Registry {
	envs := map[string]config.Environment{
		config.LocalEnvironment: {Name: config.LocalEnvironment, Launcher: config.LocalLauncher},
	}
	for _, e := range cfg.Environments {
		envs[e.Name] = e
	}
	return &Registry{envs: envs, opts: opts}
}

// Resolve returns the target for an environment name ("" = local).
func (r *Registry) Resolve(name string) (Target, error) {
	if name == "" {
		name = config.LocalEnvironment
	}
	e, ok := r.envs[name]
	if !ok {
		return Target{}, fmt.Errorf("%w %q: add an environment %q block, or set environment to \"local\"", ErrUnknown, name, name)
	}
	if e.Launcher == "" || e.Launcher == config.LocalLauncher {
		return Target{Name: name, Launcher: r.opts.Local, LauncherName: config.LocalLauncher, Cwd: e.Cwd}, nil
	}
	if r.opts.Plugin == nil {
		return Target{}, fmt.Errorf("%w: environment %q (%s) uses launcher plugin %q, but no plugins are available here",
			ErrNoLauncher, name, where(e), e.Launcher)
	}
	l, err := r.opts.Plugin(e.Launcher, e)
	if err != nil {
		return Target{}, fmt.Errorf("%w: environment %q (%s): launcher plugin %q: %w", ErrNoLauncher, name, where(e), e.Launcher, err)
	}
	return Target{Name: name, Launcher: l, LauncherName: e.Launcher, Remote: true, Cwd: e.Cwd}, nil
}

func where(e config.Environment) string {
	if e.DeclRange.Filename == "" {
		return "built in"
	}
	return fmt.Sprintf("%s:%d", e.DeclRange.Filename, e.DeclRange.Start.Line)
}
