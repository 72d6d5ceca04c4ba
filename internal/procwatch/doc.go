// Package procwatch lets tests observe real processes: whether a pid is
// still alive, which processes share a process group, waiting for a
// process to be gone without sleeping, and waiting for a line of output.
//
// It is Linux-only test support (it reads /proc and uses pidfds) and must
// not be imported by production code.
package procwatch
