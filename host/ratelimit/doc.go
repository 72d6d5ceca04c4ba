// Package ratelimit owns the serve limit blocks: token buckets per
// caller, per tool, per both or shared, checked before a call is
// approved. A call over a limit is refused with an error that says when
// to retry.
//
// It must not sleep or queue calls: a limited call is answered at once,
// so a model (or its user) decides whether to wait. It keeps no state
// across configuration reloads. It takes its own [Limit], not config
// types (the host translates serve's limit blocks), and must not import
// host/config.
package ratelimit
