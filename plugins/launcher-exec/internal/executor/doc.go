// Package executor is the launcher plugin toolgate-launcher-exec: it starts
// the stdio MCP servers of one environment through an executor chosen in
// the environment's config {} block, and hands each process to the SDK's
// launcher shim, which carries its stdin, stdout and stderr to the host.
//
// # Executors
//
// executor = "local" runs the command on the plugin's machine, optionally
// under sandbox_prefix (for example bwrap). "ssh" runs it on another
// machine with `ssh -T -o BatchMode=yes`. "docker", "kubectl" and "nomad"
// run it inside an existing container, pod or allocation through
// `docker exec -i`, `kubectl exec -i` and `nomad alloc exec -i -t=false`.
// "custom" runs it through an argv template of the user's own. None of
// them ever asks for a TTY: MCP stdio is a byte stream that a TTY would
// corrupt.
//
// # How env and cwd reach the server
//
// The host sends the server's environment as an explicit list: for a
// launcher plugin, only the server's env_vars (source "local") and literal
// env entries. The executor supplies its own base environment, so an
// env_vars entry with source = "remote" needs nothing from the plugin: the
// variable is read from the base environment where the command runs (the
// ssh login, the container, the pod). Per executor:
//
//   - local: the process gets the variables named by inherit_env (by
//     default the host's allowlist: HOME LOGNAME PATH SHELL USER LANG
//     LC_ALL TERM TMPDIR TZ, as far as the plugin has them) overlaid with
//     the server's entries, and the server's cwd as its working
//     directory. A bare command is looked up in that environment's PATH.
//   - ssh, kubectl, nomad (and docker with shell set, and custom with
//     {{script}}): ssh has no way to pass variables without server-side
//     configuration (AcceptEnv) and kubectl/nomad exec have no env or cwd
//     flags, so the command runs under a POSIX shell script: `cd -- DIR`,
//     `export NAME='value'` for each entry (values POSIX-quoted, names
//     must be shell identifiers), a check that the command exists, then
//     `exec COMMAND ARGS`. The remote side needs a POSIX shell (the ssh
//     login shell; `sh` in the container, see shell). Values are part of
//     the executor's argv, visible to the local and remote process list;
//     keep secrets in the remote environment (source = "remote").
//   - docker: `-w DIR` and `-e NAME` per entry; the values travel in the
//     docker CLI's own environment, never on its argv, except for names
//     the CLI reads itself (PATH, HOME, DOCKER_*, and its inherit_env and
//     executor_env names), which are passed as `-e NAME=value`. No shell
//     is needed unless shell is set.
//   - custom: {{dir}} and {{env}} placeholders (an element containing
//     {{env}} is repeated once per entry, with {{env}} replaced by
//     NAME=value), or {{script}} (the shell script above), or
//     runs_locally = true for a local wrapper that passes its own
//     environment and working directory on. If the server has env entries
//     or a cwd and the template cannot carry them, the start fails naming
//     the missing placeholder: nothing is dropped silently.
//
// # Start errors
//
// Executors that run the shell script print a readiness line (with a
// per-launch nonce) on stderr right before the exec. Start waits for that
// line, so the executor's own failures (ssh refused the key, the pod does
// not exist, the command is missing, the directory is missing) become a
// *launcher.StartError with the executor's stderr excerpt instead of a
// process that dies after the host started talking to it. Executors
// without the script (local, docker without shell, custom without
// {{script}}) report such failures as an early exit: the shim streams the
// stderr and the exit status at once, and the host quotes them.
//
// # Shutdown and orphans
//
// Every executor process is started here, in the plugin process, with
// launcher.StartCommand: its own process group, which signals reach as a
// whole, SIGKILL when the plugin dies (Pdeathsig), and on Linux a
// containment cell (a cgroup under the plugin's own cgroup, which the
// host made for the plugin, or the subreaper walk) so that what the
// local executor's server starts with setsid ends with it too. The host closes stdin first (the MCP shutdown
// order) and signals only if that does not end the process. Remote
// executors rely on the stdin EOF: ssh, docker, kubectl and nomad forward
// it, and a server that exits on EOF (as MCP requires) ends remotely
// (kubectl only over the WebSocket streaming of recent Kubernetes
// releases; older SPDY streams may not carry the EOF).
// Killing the local ssh or kubectl client closes the remote session, which
// ends the remote server's stdin too.
//
// # What it must not do
//
// Import anything of the host or the MCP go-sdk (it is built against
// sdk/ only, like a third-party plugin); allocate a TTY; pass on
// variables of its own environment other than the inherit_env names;
// write env values, args or scripts into logs or error texts.
//
// # Concurrency
//
// A [Launcher] is safe for concurrent use: Start may run for several
// servers at once, and Configure may replace the configuration while
// processes run (they keep the configuration they started with).
package executor
