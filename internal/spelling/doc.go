// Package spelling finds what a user probably meant: the edit distance
// between two words and the closest of a set of known names. Config
// diagnostics, the CLI and plugins use it for their "Did you mean …?"
// hints, so every hint follows the same rule.
//
// It owns only string distance; it must not know what the names are.
package spelling
