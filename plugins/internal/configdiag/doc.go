// Package configdiag turns a plugin's decoded config block (the JSON the host
// sends to Configure) into Go values and collects the problems found as
// sdk.Diagnostics that carry attribute paths, so that the host can point at
// the right line of the user's file.
//
// What it must not do: know any plugin's schema or apply defaults; each
// plugin does that in its own config code.
//
// Concurrency: a [Set] belongs to one Configure call and is not safe for
// concurrent use; the functions are.
package configdiag
