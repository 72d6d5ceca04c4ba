// Package pty opens pseudo-terminals so tests can run toolgate the way a
// person at a terminal does (stdin a TTY, prompts answered by typing).
//
// Linux only; test support, not for production code.
package pty
