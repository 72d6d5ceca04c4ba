// Package pathscope answers "does this path argument lie inside that
// directory?" for the policy hook and the Guardian's rules engine, the way the
// operating system would resolve the path, not the way it reads.
//
// A path such as "/work/link/../../etc/passwd" reads as inside /work but, when
// link points elsewhere, opens a file far outside it. [Resolve] therefore
// walks the path one component at a time, following every symlink that exists
// (up to a limit) and applying ".." to the resolved prefix. Components that do
// not exist yet (the file a write would create) are appended lexically: they
// cannot be symlinks.
//
// What it must not do: open, create or modify files; it only calls Lstat and
// Readlink. It does not know about workspaces or policies; callers decide what
// "outside" means for them and how to fail (both callers treat an unresolvable
// path as outside, so that a rule meant to deny fails closed).
//
// Paths are POSIX paths. Windows drive letters and UNC paths are not handled.
//
// Concurrency: every function is safe for concurrent use; nothing is cached,
// so a symlink changed between two calls is seen by the second.
package pathscope
