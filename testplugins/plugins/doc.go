// Package plugins holds one deliberately broken or minimal plugin per
// failure mode the host must survive (a hook that crashes, hangs, answers
// garbage, writes to stdout, speaks an old protocol; a launcher that dies),
// each a command in its own directory, and the tests that run them as real
// processes through go-plugin.
//
// It owns test fixtures only; nothing here is linked into toolgate, and a
// fixture must fail in exactly one way so a test names what broke.
package plugins
