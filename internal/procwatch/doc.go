// Package procwatch lets tests observe real processes: whether a pid is
// still alive, which processes share a process group, waiting for a
// process to be gone without sleeping, waiting for a line of output, and
// tying a started process's life to the test binary's.
//
// It is Linux-only test support (it reads /proc and uses pidfds) and must
// not be imported by production code.
package procwatch
