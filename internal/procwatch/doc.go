// Package procwatch lets tests observe real processes: whether a pid is
// still alive, which processes share a process group, waiting for a
// process to be gone without sleeping, waiting for a line of output, and
// tying a started process's life to the test binary's.
//
// Test support only; production code must not import it. It sets
// process groups and Pdeathsig itself (OwnGroup, DieWithTest) rather than
// through internal/contain: it is how the containment tests observe and
// clean up, so it must not depend on the code they check.
//
// Linux is the reference: /proc, pidfds (WaitGone wakes the moment a
// process exits) and Pdeathsig (DieWithTest). Elsewhere the same functions
// use weaker means, each documented where it is declared: on macOS and
// other Unixes ps(1) and polling, and no parent-death signal; on Windows
// process handles and the Toolhelp snapshot, no process groups, and a
// polled file instead of a FIFO.
package procwatch
