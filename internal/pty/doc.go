// Package pty opens pseudo-terminals so tests can run toolgate the way a
// person at a terminal does (stdin a TTY, prompts answered by typing).
//
// Test support, not for production code. Implemented on Linux (/dev/ptmx);
// on other systems Open returns an error matching errors.ErrUnsupported
// and the terminal tests skip there, saying so.
package pty
