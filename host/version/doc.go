// Package version holds toolgate's own version: the one `toolgate
// version` prints and toolgate reports as its clientInfo and serverInfo,
// its HTTP User-Agent and its telemetry resource. It is set at link time
// (the Makefile's and deploy/Dockerfile's -X flag).
//
// It owns only that string; MCP protocol versions belong to
// host/mcpclient and host/gateway.
package version

// Toolgate is toolgate's version, "dev" unless the build sets it with
// -ldflags "-X github.com/toolgate/toolgate/host/version.Toolgate=v1.2.3".
var Toolgate = "dev"
