// Package events owns the typed events of the host (server startup, tool
// calls, approval decisions, plugin states) and their delivery: the Bus
// that fans them out, the LogSink that renders them for operators, the
// AuditSink that appends them to the audit ledger (a JSONL file whose
// records are hash-chained; the format is host/ledger's), and the Recorder that
// tests of other packages assert on.
//
// Events are records of what other packages already decided. This package
// must not decide anything: it never filters, vetoes or reorders calls,
// and no caller may branch on whether an Emit "succeeded". Operator logs
// and the audit trail are kept apart on purpose (go-style R25): the log is
// for humans and may omit detail, the audit file is complete.
//
// Delivery contract: Emit never blocks on a slow consumer. Synchronous
// sinks (AddSink) are called inline and must be fast; they are for
// consumers that must not lose a record (the audit file, the logger).
// Subscribers (Subscribe) get events through a buffered channel and lose
// events when they fall behind; the loss is counted (Bus.Dropped).
//
// Concurrency: Bus, AuditSink, Recorder and the LogSink are safe for
// concurrent use. Events are values; sinks must not modify the
// json.RawMessage fields they receive, which may be shared.
package events
