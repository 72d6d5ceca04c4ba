// Package contain keeps track of every process a child of toolgate starts,
// so that stopping the child (or toolgate dying, even by SIGKILL) ends all
// of them: its process group, and also descendants that left the group or
// the session (setsid), as language servers, browsers and shells do.
//
// A [Cell] holds one child (a stdio server, a plugin) and everything it
// starts. [Manager.NewCell] picks the strongest containment the OS and the
// process's rights allow, reported by [Cell.Kind]:
//
//   - Linux, [KindCgroup]: the child is started inside a cgroup v2 of its
//     own (clone3 CLONE_INTO_CGROUP, so not even its first fork escapes),
//     created under toolgate's own cgroup2 path (found through
//     /proc/self/mountinfo and /proc/self/cgroup) as
//     toolgate-<pid>/<name>-<n>. Nothing inside can leave it, whatever it
//     does with setsid; cgroup.kill ends it all at once (kernels without
//     cgroup.kill: SIGKILL to every pid in cgroup.procs until it is
//     empty). Each cgroup is removed once empty. This needs toolgate's own
//     cgroup to be writable: as root, or inside a delegated subtree such
//     as a systemd user service or `systemd-run --user --scope` (the
//     kernel only moves a process between cgroups whose common ancestor
//     the writer may write, so no other place would work for a non-root
//     toolgate).
//   - Linux, [KindSubreaper]: when no cgroup can be made (or
//     TOOLGATE_CONTAINMENT=subreaper, which tests use to force it),
//     toolgate becomes a child subreaper (PR_SET_CHILD_SUBREAPER), so
//     orphaned descendants are re-parented to toolgate rather than to
//     init, and each stop walks the descendants: parent links from the
//     leader, members of any process group or session a found process
//     leads, repeated until nothing new appears; every process found is
//     remembered (with its start time, so a reused pid is never
//     signalled), so a grandchild whose parent was just killed is still
//     known. Limit: a descendant that left the group and the session and
//     whose parent exited before the stop began is not found.
//   - macOS and other Unixes, [KindProcessGroup]: the process group,
//     registered with the supervisor (below) for host death.
//   - Windows, [KindJobObject]: a Job Object with kill-on-close, which
//     Windows ends when the host's handle closes (even on a kill).
//
// [Cell.Prepare] is the one place a child gets its process group, its
// Pdeathsig (Linux) or CREATE_NEW_PROCESS_GROUP (Windows): host/launch,
// sdk/launcher.StartCommand and host/pluginhost all start children
// through a cell.
//
// # Starting and stopping
//
// [Cell.Start] starts a child in its cell and returns a [Process], the
// one owner of its lifecycle on every OS: one goroutine reaps it (on
// Linux waiting without reaping first, so the group id cannot be reused
// while the rest is ended); when it exits, what it left in its group and
// cell gets SIGTERM and, ExitGrace after the first SIGTERM, SIGKILL; then
// the cell is closed. [Process.Stop] is the one escalation: close stdin,
// stdinGrace, SIGTERM to the group and cell, termGrace, SIGKILL
// (Windows: terminate the Job Object after stdinGrace, as a console-less
// child has no signal to handle). host/launch's Close is Stop, and so is a
// launcher plugin's stop of a sdk/launcher.StartCommand process: the
// host's RemoteProcess.Close sends one stop frame with its graces, and
// the plugin runs Stop with them. [Escalate] is the sequence itself, said
// once: Stop runs it, and the launcher shim runs it through Signal on a
// plugin's process that StartCommand did not make. host/pluginhost
// starts no Process: go-plugin owns the plugin process (its start, wait
// and Kill), so pluginhost only Prepares the command, reports the pid to
// Started, and Closes the cell once go-plugin has reaped the plugin,
// which ends every descendant it left.
//
// # Toolgate SIGKILLed
//
// On Linux and macOS a supervisor ends what toolgate started when
// toolgate cannot: the same binary, re-executed (/proc/self/exe on Linux)
// with TOOLGATE_CONTAIN_ROLE=supervisor, in a process group of its own,
// reading a pipe whose only writer is toolgate. Only a binary that calls
// [RunSupervisorIfAsked] first thing in main becomes one (toolgate, and
// launcher plugins through launcher.Serve): nothing here runs before
// main, and in a binary that never calls it cells still contain but no
// supervisor starts. Cells register and unregister themselves on that
// pipe. When the pipe reaches EOF while cells are registered, toolgate
// died: the supervisor kills every registered cgroup (or walks and kills
// every registered process group's descendants; macOS: SIGKILLs every
// registered group), removes the cgroups and exits. There is one per
// toolgate process, not one per server. It runs only while a cell is
// registered: the last unregistration closes the pipe and reaps it, so it
// never outlives its work. Between a process's start and its cell's registration (fallback
// only; cgroups are registered before the start) there is a window of
// microseconds.
//
// It must not decide when a child stops (its owner does) or log: errors
// are returned for the owner's logger.
package contain
