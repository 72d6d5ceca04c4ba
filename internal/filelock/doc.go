// Package filelock owns how toolgate takes an exclusive lock on a file
// across processes: flock(2) on Linux, macOS and the BSDs, LockFileEx on
// Windows. Its users are the audit ledger (host/events: its writers take
// turns) and the OAuth token store (host/oauth: one refresh at a time).
//
// It locks an open file and nothing else: opening, naming and keeping the
// lock file are the caller's, and so is what the lock protects. The
// kernel drops a lock when its holder dies. It must not log.
package filelock
