package launch

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// EnvVar is one variable a server receives by name (an env_vars entry,
// as host/manager translates it).
type EnvVar struct {
	Name string
	// Remote is set when the variable is read on the executor side of a
	// launcher that runs elsewhere (source = "remote"); otherwise it is
	// copied from this host's environment.
	Remote bool
}

// baseEnvNames are the host variables every local child receives (when set):
// enough for a program to find itself, its user, its locale and a temp dir,
// and nothing that could carry a secret.
const baseEnvNames = "HOME LOGNAME PATH SHELL USER LANG LC_ALL TERM TMPDIR TZ"

// windowsBaseEnvNames replace baseEnvNames on Windows: what programs there
// need to find themselves (PATH, PATHEXT), the system (SYSTEMROOT, WINDIR,
// COMSPEC; many fail to start without SYSTEMROOT), the user's profile and
// folders, and a temp dir. The same set Codex passes.
const windowsBaseEnvNames = "PATH PATHEXT SHELL COMSPEC SYSTEMROOT WINDIR SYSTEMDRIVE USERNAME USERDOMAIN USERPROFILE " +
	"HOMEDRIVE HOMEPATH PROGRAMFILES PROGRAMFILES(X86) PROGRAMW6432 PROGRAMDATA LOCALAPPDATA APPDATA TEMP TMP TMPDIR POWERSHELL PWSH"

// BuildEnv returns the complete environment of a stdio server as sorted
// KEY=VALUE pairs, ready for [Spec.Env].
//
// Local mode (remote = false) starts from an empty environment, copies the
// allowlist HOME LOGNAME PATH SHELL USER LANG LC_ALL TERM TMPDIR TZ (on
// Windows instead PATH PATHEXT SHELL COMSPEC SYSTEMROOT WINDIR SYSTEMDRIVE
// USERNAME USERDOMAIN USERPROFILE HOMEDRIVE HOMEPATH PROGRAMFILES
// PROGRAMFILES(X86) PROGRAMW6432 PROGRAMDATA LOCALAPPDATA APPDATA TEMP TMP
// TMPDIR POWERSHELL PWSH, names compared case-insensitively) and then
// the names in vars from the host (each only when set), and finally applies
// the literal env entries, which win. An entry with source "remote" is an
// error in local mode: only a launcher that runs elsewhere can read it.
//
// Remote mode (remote = true, for launcher plugins whose executor supplies
// its own base environment) copies only the vars with source local, then the
// env literals; no allowlist, and remote-source names are skipped: get them
// from [RemoteEnvNames] and hand them to the executor.
//
// lookup reads the host environment; nil means [os.LookupEnv]. Errors name
// variables, never values.
func BuildEnv(lookup func(string) (string, bool), vars []EnvVar, env map[string]string, remote bool) ([]string, error) {
	p := hostPlatform()
	if lookup != nil {
		p.hostEnv = lookup
	}
	return p.buildEnv(vars, env, remote)
}

func (p platform) buildEnv(vars []EnvVar, env map[string]string, remote bool) ([]string, error) {
	// On Windows names are case-insensitive: key by upper case and keep
	// the spelling of whoever set the value last (Path stays Path).
	merged := make(map[string]string)
	spelled := make(map[string]string)
	set := func(name, value string) {
		key := name
		if p.windows() {
			key = strings.ToUpper(name)
		}
		merged[key] = value
		spelled[key] = name
	}
	copyFromHost := func(name string) {
		if value, ok := p.hostEnv(name); ok {
			set(name, value)
		}
	}
	if !remote {
		names := baseEnvNames
		if p.windows() {
			names = windowsBaseEnvNames
		}
		for _, name := range strings.Fields(names) {
			copyFromHost(name)
		}
	}
	for _, v := range vars {
		if err := checkEnvName("env_vars entry", v.Name); err != nil {
			return nil, err
		}
		switch {
		case !v.Remote:
			copyFromHost(v.Name)
		case !remote:
			return nil, fmt.Errorf("build environment: env_vars entry %q uses source \"remote\", which needs an environment whose launcher runs elsewhere; "+
				"run the server in such an environment or drop source = \"remote\" to copy it from this host", v.Name)
		}
	}
	for name, value := range env {
		if err := checkEnvName("env entry", name); err != nil {
			return nil, err
		}
		if strings.IndexByte(value, 0) >= 0 {
			return nil, fmt.Errorf("build environment: env entry %q has a value containing a NUL byte, which no process environment can hold; remove it", name)
		}
		set(name, value)
	}
	out := make([]string, 0, len(merged))
	for _, key := range slices.Sorted(maps.Keys(merged)) {
		out = append(out, spelled[key]+"="+merged[key])
	}
	return out, nil
}

// RemoteEnvNames returns the names of the vars with source "remote", in
// config order without duplicates: a remote launcher reads them on the
// executor side.
func RemoteEnvNames(vars []EnvVar) []string {
	var names []string
	for _, v := range vars {
		if v.Remote && !slices.Contains(names, v.Name) {
			names = append(names, v.Name)
		}
	}
	return names
}

func checkEnvName(what, name string) error {
	if name == "" || strings.ContainsAny(name, "=\x00") {
		return fmt.Errorf("build environment: %s %q is not a valid variable name; use a name without '=' or NUL", what, name)
	}
	return nil
}
