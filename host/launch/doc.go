// Package launch starts and ends local stdio MCP server processes and
// builds their environment.
//
// It owns four things:
//
//   - [BuildEnv]: a child's environment. Local children start from an empty
//     environment plus the allowlist HOME LOGNAME PATH SHELL USER LANG
//     LC_ALL TERM TMPDIR TZ (on Windows: PATH PATHEXT COMSPEC SYSTEMROOT
//     USERPROFILE APPDATA LOCALAPPDATA PROGRAMDATA TEMP TMP USERNAME and the
//     rest of windowsBaseEnvNames, case-insensitive), the config's env_vars
//     names, then the literal env entries (which win). Remote launchers get only the explicit
//     entries; [RemoteEnvNames] lists what the executor must read itself.
//   - [Local], the built-in [Launcher]: each child runs in its own process
//     group (Unix) or Job Object (Windows), dies when the host dies, and is
//     ended by [Process.Close] so that no descendant survives it.
//   - Command resolution (command.go): PATH lookup on Unix; on Windows also
//     PATHEXT (npx finds npx.cmd), drive and UNC paths, and .cmd/.bat shims
//     run through cmd.exe. The rules are pure functions of the OS facts, so
//     Linux tests cover every OS's branch.
//   - [PumpStderr]: a child's stderr, logged line by line under the
//     server's logger.
//
// It must not speak MCP (the MCP client wraps a [Process] as a byte stream),
// read config files or import host/config (callers pass [Spec] and
// [EnvVar] values; host/manager translates a server block), or decide which launcher
// runs a server (that is host/environment). It never logs or returns
// environment values or arguments, which may hold secrets.
//
// # Termination
//
// [Process.Close] follows the MCP stdio shutdown order, which
// internal/contain's Process.Stop owns for every starter:
//
//  1. close the child's stdin;
//  2. wait up to StdinGrace ([DefaultStdinGrace], 2 s) for the leader to exit;
//  3. Unix: SIGTERM to the whole process group;
//     Windows: terminate the Job Object (no step 4 or 5: Windows has no
//     signal a console-less child could handle);
//  4. wait up to TermGrace ([DefaultTermGrace], 2 s);
//  5. SIGKILL to the whole process group.
//
// Whenever the leader exits, on its own or in that sequence, the rest of its
// group (an npx or uv wrapper's real server, say) gets SIGTERM and, if any
// member is still alive TermGrace after the first SIGTERM, SIGKILL (Windows:
// the job is terminated). On Linux the leader stays an unreaped zombie
// meanwhile, so its pid cannot be reused and a group signal can never reach
// an unrelated process; other Unixes reap it first and rely on POSIX never
// reusing a live group's id. Close returns once the leader is reaped.
// [Process.Kill] ends the group (or job) at once.
//
// On Linux each server also has a containment cell (internal/contain): a
// cgroup v2 of its own, or, where none can be made, the child-subreaper
// walk of its descendants. Every signal above also reaches the processes
// of the cell outside the group (setsid descendants), and once the leader
// is reaped whatever is left of the cell is killed and the cgroup removed,
// so no descendant survives Close. [Containment] names the kind in use.
// This is where a local server's processes really start; a launcher
// plugin's processes start in the plugin (sdk/launcher.StartCommand),
// which gives each its own cell inside the plugin's.
//
// A server that ignores SIGTERM is SIGKILLed TermGrace later: Close never
// hangs on it.
//
// # Dying with the host
//
// Linux: what a killed host leaves is ended by the supervisor of
// internal/contain (the host binary re-executed, reading a pipe from the
// host; at EOF it kills the registered cgroups or walks the registered
// groups). The server itself also gets Pdeathsig = SIGKILL, which Linux
// ties to the thread
// that forked the child rather than to the host process. Local therefore
// forks from one goroutine locked to its OS thread for as long as any child
// it started is unreaped; see spawner.go for why that keeps the thread
// alive. A set-user-ID server binary loses Pdeathsig at exec (a kernel rule).
//
// macOS and other Unixes have no parent-death signal: the server's cell
// registers its process group with the same supervisor, which SIGKILLs
// the group when the host dies. A host killed in the microseconds between
// starting a server and its registration leaves the server with only
// stdin EOF to tell it to exit.
//
// Windows: the server's cell is a Job Object created with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE. The host holds its only handle;
// when the host exits for any reason Windows closes it and ends every
// process in the job, descendants included. The assignment happens right
// after the process starts (os/exec cannot start it suspended), so a child
// spawned in that first instant could escape.
//
// Process groups, Pdeathsig, the supervisor and Job Objects are all
// internal/contain's: this package decides when to stop, not how a
// process is held.
//
// Elsewhere (neither Unix nor Windows) Launch returns an [ErrStart] error
// pointing at launcher plugins.
//
// # Concurrency
//
// [Local] is safe for concurrent use. A [Process] may be read, written and
// closed from different goroutines: Close is idempotent, makes Write fail,
// and unblocks a pending Read (which returns io.EOF). Each process has
// exactly one goroutine, which waits for the leader, ends the rest of the
// group and reaps it; Local adds one spawner goroutine while any of its
// children is unreaped. All of them end once the processes are gone.
// PumpStderr runs in a goroutine owned by the caller and returns at EOF,
// at the latest about a second after Close.
package launch
