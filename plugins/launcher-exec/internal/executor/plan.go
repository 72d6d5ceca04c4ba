package executor

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/sdk/launcher"
)

// invocation is the local program that runs one server: the executor's
// program with its argv, environment and working directory.
type invocation struct {
	program string   // resolved path of argv[0]
	argv    []string // argv[0] as configured
	env     []string // KEY=VALUE, the local program's whole environment
	dir     string   // the local program's working directory; "" = the plugin's
	// marker is the line the start script prints on stderr right before it
	// execs the command; "" when this executor runs no start script.
	marker string
	// where says where the command runs, for messages: `on "build-1" over ssh`.
	where string
	// hint says how to fix a failure of the executor itself.
	hint string
}

// plan builds the invocation of spec under c. lookupEnv reads the plugin's
// own environment. Problems the user must fix are *launcher.StartError.
func (c *Config) plan(spec launcher.Spec, marker string, lookupEnv func(string) (string, bool)) (*invocation, error) {
	if spec.Command == "" {
		return nil, &launcher.StartError{Kind: launcher.KindOther, Message: "the server has no command; set command in its server block"}
	}
	inherited := map[string]string{}
	for _, n := range c.InheritEnv {
		if v, ok := lookupEnv(n); ok {
			inherited[n] = v
		}
	}
	// The server's own environment, for executors whose program passes
	// its environment on to the command.
	serverEnv := mergeEnv(inherited, spec.Env)
	// The executor program's environment: never passed on by it.
	executorEnv := mergeEnv(inherited, c.ExecutorEnv)
	entries := sortedEntries(spec.Env)

	inv := &invocation{}
	switch c.Executor {
	case ExecutorLocal:
		inv.where = "on this machine"
		inv.env, inv.dir = environ(serverEnv), spec.Dir
		inv.argv = append(append(slices.Clone(c.SandboxPrefix), spec.Command), spec.Args...)
		if len(c.SandboxPrefix) == 0 {
			return inv, inv.resolve(serverEnv, lookupEnv, "set command to its absolute path, or add its directory to PATH in the server's env")
		}
		return inv, inv.resolve(serverEnv, lookupEnv, "install it, or set sandbox_prefix to its absolute path")

	case ExecutorSSH:
		inv.where = fmt.Sprintf("on %q over ssh", c.Host)
		inv.hint = "check that the host is reachable, that user and identity_file are right and the key is in the remote authorized_keys, and that the host key is known (known_hosts_file, strict_host_key_checking)"
		if err := shellEntries(entries, inv.where); err != nil {
			return nil, err
		}
		inv.marker = marker
		inv.argv = c.sshArgv(startScript{dir: spec.Dir, env: entries, command: spec.Command, args: spec.Args, marker: marker}.String())
		inv.env = environ(executorEnv)

	case ExecutorDocker:
		inv.where = fmt.Sprintf("in docker container %q", c.Container)
		inv.hint = "check that the container is running (docker ps) and that the docker CLI can reach the daemon (DOCKER_HOST in executor_env)"
		inv.argv, inv.env = c.dockerArgv(spec, entries, executorEnv, marker)
		if c.Shell != "" {
			inv.marker = marker
			inv.hint += fmt.Sprintf(", and that the image has the shell %q", c.Shell)
		}

	case ExecutorKubectl:
		inv.where = fmt.Sprintf("in pod %q", c.Pod)
		inv.hint = fmt.Sprintf("check the pod, container, namespace and context (kubectl get pod), and that the image has the POSIX shell %q (set shell to its path)", c.Shell)
		if err := shellEntries(entries, inv.where); err != nil {
			return nil, err
		}
		inv.marker = marker
		argv := []string{c.Program}
		argv = appendIf(argv, c.Context != "", "--context", c.Context)
		argv = appendIf(argv, c.Namespace != "", "-n", c.Namespace)
		argv = append(argv, "exec", "-i", c.Pod)
		argv = appendIf(argv, c.Container != "", "-c", c.Container)
		script := startScript{dir: spec.Dir, env: entries, command: spec.Command, args: spec.Args, marker: marker}.String()
		inv.argv = append(argv, "--", c.Shell, "-c", script)
		inv.env = environ(executorEnv)

	case ExecutorNomad:
		inv.where = fmt.Sprintf("in nomad allocation %q", c.Alloc)
		inv.hint = fmt.Sprintf("check the allocation, task and namespace (nomad alloc status), NOMAD_ADDR and NOMAD_TOKEN in executor_env, and that the task has the POSIX shell %q (set shell to its path)", c.Shell)
		if err := shellEntries(entries, inv.where); err != nil {
			return nil, err
		}
		inv.marker = marker
		argv := []string{c.Program, "alloc", "exec", "-i=true", "-t=false"}
		argv = appendIf(argv, c.Namespace != "", "-namespace", c.Namespace)
		argv = appendIf(argv, c.Task != "", "-task", c.Task)
		script := startScript{dir: spec.Dir, env: entries, command: spec.Command, args: spec.Args, marker: marker}.String()
		inv.argv = append(argv, c.Alloc, c.Shell, "-c", script)
		inv.env = environ(executorEnv)

	case ExecutorCustom:
		inv.where = fmt.Sprintf("through the custom prefix %q", c.Prefix[0])
		inv.hint = "check the prefix and what its program needs (executor_env)"
		if err := c.customPlan(inv, spec, entries, serverEnv, executorEnv, marker); err != nil {
			return nil, err
		}
	default:
		return nil, &launcher.StartError{Kind: launcher.KindOther, Message: fmt.Sprintf("unknown executor %q", c.Executor)}
	}
	env := executorEnv
	if c.Executor == ExecutorCustom && c.RunsLocally {
		env = serverEnv
	}
	return inv, inv.resolve(env, lookupEnv, fmt.Sprintf("install it, or set the executor's program to its absolute path (%s)", c.programAttribute()))
}

func (c *Config) programAttribute() string {
	if c.Executor == ExecutorCustom {
		return "prefix[0]"
	}
	return c.Executor
}

func (c *Config) sshArgv(script string) []string {
	argv := []string{c.Program, "-T", "-o", "BatchMode=yes"}
	argv = appendIf(argv, c.Port != 0, "-p", strconv.Itoa(c.Port))
	argv = appendIf(argv, c.User != "", "-l", c.User)
	if c.IdentityFile != "" {
		argv = append(argv, "-i", c.IdentityFile, "-o", "IdentitiesOnly=yes")
	}
	argv = appendIf(argv, c.KnownHostsFile != "", "-o", "UserKnownHostsFile="+c.KnownHostsFile)
	argv = appendIf(argv, c.StrictHostKeyChecking != "", "-o", "StrictHostKeyChecking="+c.StrictHostKeyChecking)
	for _, o := range c.Options {
		argv = append(argv, "-o", strings.TrimSpace(o))
	}
	// ssh joins everything after the host into one command line for the
	// remote login shell: the script is that line.
	return append(argv, "--", c.Host, script)
}

// dockerArgv passes env with -e NAME (the value in the docker CLI's own
// environment, off its argv) except for names the CLI itself would read,
// and cwd with -w.
func (c *Config) dockerArgv(spec launcher.Spec, entries []envEntry, executorEnv map[string]string, marker string) ([]string, []string) {
	argv := []string{c.Program, "exec", "-i"}
	argv = appendIf(argv, c.User != "", "-u", c.User)
	argv = appendIf(argv, spec.Dir != "", "-w", spec.Dir)
	cliEnv := mergeEnv(executorEnv, nil)
	for _, e := range entries {
		if _, ownName := executorEnv[e.name]; ownName || e.name == "PATH" || e.name == "HOME" || strings.HasPrefix(e.name, "DOCKER_") {
			argv = append(argv, "-e", e.name+"="+e.value)
			continue
		}
		argv = append(argv, "-e", e.name)
		cliEnv[e.name] = e.value
	}
	argv = append(argv, c.Container)
	if c.Shell != "" {
		script := startScript{command: spec.Command, marker: marker, useArgv: true}.String()
		argv = append(argv, c.Shell, "-c", script)
	}
	argv = append(argv, spec.Command)
	return append(argv, spec.Args...), environ(cliEnv)
}

func (c *Config) customPlan(inv *invocation, spec launcher.Spec, entries []envEntry, serverEnv, executorEnv map[string]string, marker string) error {
	u := usesOf(c.Prefix)
	script := ""
	if u.script {
		if err := shellEntries(entries, inv.where); err != nil {
			return err
		}
		inv.marker = marker
		script = startScript{dir: spec.Dir, env: entries, command: spec.Command, args: spec.Args, marker: marker}.String()
	}
	if c.RunsLocally {
		inv.env, inv.dir = environ(serverEnv), spec.Dir
	} else {
		inv.env = environ(executorEnv)
		var missing []string
		if len(entries) > 0 && !u.env && !u.script {
			missing = append(missing, fmt.Sprintf("environment variables (%s) but prefix has no {{env}} or {{script}}", entryNames(entries)))
		}
		if spec.Dir != "" && !u.dir && !u.script {
			missing = append(missing, fmt.Sprintf("a working directory (%q) but prefix has no {{dir}} or {{script}}", spec.Dir))
		}
		if len(missing) > 0 {
			return &launcher.StartError{Kind: launcher.KindOther, Message: fmt.Sprintf(
				"server %q sets %s, so they cannot reach it; add the placeholder to prefix, set runs_locally = true if the prefix passes its environment and working directory on, or remove them from the server",
				spec.Server, strings.Join(missing, ", and "))}
		}
	}
	var envForTemplate []envEntry
	if !u.script {
		envForTemplate = entries
	}
	inv.argv = expandTemplate(c.Prefix, spec.Command, spec.Args, envForTemplate, spec.Dir, script)
	return nil
}

// resolve finds argv[0]: a path is used as is; a bare name is looked up
// in env's PATH, then in the plugin's own PATH.
func (inv *invocation) resolve(env map[string]string, lookupEnv func(string) (string, bool), fix string) error {
	name := inv.argv[0]
	if strings.Contains(name, "/") {
		inv.program = name
		return nil
	}
	paths := []string{env["PATH"]}
	if own, ok := lookupEnv("PATH"); ok {
		paths = append(paths, own)
	}
	for _, path := range paths {
		if p, ok := lookPath(name, path); ok {
			inv.program = p
			return nil
		}
	}
	return &launcher.StartError{Kind: launcher.KindNotFound, Message: fmt.Sprintf(
		"%q not found in PATH on this machine: %s", name, fix)}
}

// lookPath looks name up in the directories of path, like a shell:
// the first regular file that is executable.
func lookPath(name, path string) (string, bool) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		info, err := os.Stat(p)
		if err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
			if !filepath.IsAbs(p) {
				if abs, err := filepath.Abs(p); err == nil {
					p = abs
				}
			}
			return p, true
		}
	}
	return "", false
}

// shellEntries refuses env names a POSIX shell cannot export.
func shellEntries(entries []envEntry, where string) error {
	var bad []string
	for _, e := range entries {
		if !shellIdentifier(e.name) {
			bad = append(bad, strconv.Quote(e.name))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &launcher.StartError{Kind: launcher.KindOther, Message: fmt.Sprintf(
		"environment variable %s cannot be set %s: the command runs under a POSIX shell, which only exports names of letters, digits and underscores; rename it",
		strings.Join(bad, ", "), where)}
}

func mergeEnv(base, over map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

func environ(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		out = append(out, k+"="+m[k])
	}
	return out
}

func sortedEntries(m map[string]string) []envEntry {
	out := make([]envEntry, 0, len(m))
	for _, k := range sortedKeys(m) {
		out = append(out, envEntry{k, m[k]})
	}
	return out
}

func entryNames(entries []envEntry) string {
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.name
	}
	return strings.Join(names, ", ")
}

func appendIf(argv []string, cond bool, more ...string) []string {
	if cond {
		return append(argv, more...)
	}
	return argv
}
