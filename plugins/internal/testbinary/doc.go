// Package testbinary gives the plugins' tests the path of a built plugin
// binary, so that they can run it as the host would (plugintest.RunBinary).
//
// With TOOLGATE_BIN set (make test does so after make build) it uses
// $TOOLGATE_BIN/plugins/<name> when that file exists; otherwise it builds the
// plugin with the go command into a directory the caller owns. It is test
// support: only _test.go files import it.
//
// Concurrency: Locate may be called concurrently for different directories.
package testbinary
