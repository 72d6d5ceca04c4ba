// Package launch starts and ends local stdio MCP server processes and
// builds their environment.
//
// It owns three things:
//
//   - [BuildEnv]: a child's environment. Local children start from an empty
//     environment plus the allowlist HOME LOGNAME PATH SHELL USER LANG
//     LC_ALL TERM TMPDIR TZ, the config's env_vars names, then the literal
//     env entries (which win). Remote launchers get only the explicit
//     entries; [RemoteEnvNames] lists what the executor must read itself.
//   - [Local], the built-in [Launcher]: each child runs in its own process
//     group, receives SIGKILL when the host dies (Pdeathsig), and is ended
//     by [Process.Close] so that no descendant survives it.
//   - [PumpStderr]: a child's stderr, logged line by line under the
//     server's logger.
//
// It must not speak MCP (the MCP client wraps a [Process] as a byte stream),
// read config files (callers pass [Spec] values), or decide which launcher
// runs a server (that is host/environment). It never logs or returns
// environment values or arguments, which may hold secrets.
//
// # Termination
//
// [Process.Close] follows the MCP stdio shutdown order:
//
//  1. close the child's stdin;
//  2. wait up to StdinGrace ([DefaultStdinGrace], 2 s) for the leader to exit;
//  3. SIGTERM to the whole process group;
//  4. wait up to TermGrace ([DefaultTermGrace], 2 s);
//  5. SIGKILL to the whole process group.
//
// Whenever the leader exits, on its own or in that sequence, the rest of its
// group (an npx or uv wrapper's real server, say) gets SIGTERM and, if any
// member is still alive TermGrace after the first SIGTERM, SIGKILL. The
// leader stays an unreaped zombie meanwhile, so its pid cannot be reused
// and a group signal can never reach an unrelated process. Close returns
// once the leader is reaped; descendants that left the group (setsid) are
// beyond its reach. [Process.Kill] sends SIGKILL to the group at once.
//
// # Dying with the host
//
// Children get Pdeathsig = SIGKILL, which Linux ties to the thread that
// forked the child rather than to the host process. Local therefore forks
// from one goroutine locked to its OS thread for as long as any child it
// started is unreaped; see spawner.go for why that keeps the thread alive.
// A set-user-ID server binary loses Pdeathsig at exec (a kernel rule);
// Pdeathsig and process groups make Launch Linux-only, and elsewhere it
// returns an [ErrStart] error pointing at launcher plugins.
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
