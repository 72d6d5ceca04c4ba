// Package warnlimit rate-limits the log lines that something outside
// toolgate can trigger once per message: a server refusing requests,
// listing bad tools, sending stray responses; a client opening sessions
// past the limit. A peer that sends a thousand such messages a second
// must not write a thousand log lines a second. Each kind of warning
// gets a burst, then is counted, and one summary line per window says
// how many were suppressed.
//
// It owns only that budget and the summary line. It must not decide what
// is worth a warning, change a message's text or arguments, or drop
// anything silently: every suppressed line is counted in a summary
// logged when its window ends (or at Close).
package warnlimit
