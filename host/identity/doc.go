// Package identity owns the caller of a tool call: who asked, as the
// gateway's token validation established it (subject, client id and the
// claims the operator selected). It carries the caller through a call's
// context so that approval, hooks, the Guardian, events and the audit log
// can name it; and the upstream client's name and version ([Client]),
// recorded when there is no authenticated caller.
//
// It must not validate anything itself (host/tokenauth does) nor import
// other host packages: everything that records a call imports it.
package identity
