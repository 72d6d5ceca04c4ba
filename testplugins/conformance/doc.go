// Package conformance is the client under test for the official MCP
// conformance suite (@modelcontextprotocol/conformance, pinned in
// testplugins/interop). It drives toolgate's own MCP client,
// host/mcpclient, through the suite's client scenarios, so a passing run
// proves what the host itself does on the wire, not what a bare go-sdk
// client would do. The binary is testplugins/conformance-client, a few
// lines over [Main].
//
// # Runner contract
//
// The suite starts a scenario server and runs the client command with the
// server URL appended as the last argument; MCP_CONFORMANCE_SCENARIO names
// the scenario and, for some auth scenarios, MCP_CONFORMANCE_CONTEXT holds
// JSON credentials. The transport is always Streamable HTTP. The client
// must finish by itself: [Main] bounds the whole run with its own deadline
// (flag -deadline, default [DefaultDeadline]) and returns even if a
// scenario ignores cancellation.
//
// Exit status: 0 when the scenario's client side completed, 1 when it
// failed (the reason is the last stderr line), 2 for a usage error (no URL,
// unknown or missing scenario). Logs go through hclog to stderr (level from
// TOOLGATE_LOG, default debug); the runner keeps them in stderr.txt.
//
// # Scenarios
//
// Each scenario is a function from scenarioEnv to error, dispatched by
// name in scenarioTable; every one of the suite's 26 client scenarios is
// there. The auth scenarios drive the host's own OAuth code (host/oauth)
// through mcpclient.HTTP.OAuth, set up the way a server block would set it
// up for that kind of server (auth.go): the authorization code scenarios
// run `toolgate login`'s flow, with a headless stand-in for the browser
// that fetches the authorization URL without following the redirect and
// then delivers the redirect to the login's loopback callback; the
// client-credentials scenarios use the machine-to-machine handler (client
// secret or private-key JWT); cross-app access uses the ID-JAG handler.
// MCP_CONFORMANCE_CONTEXT supplies what a user would have configured
// (client ids, secrets, keys, the identity provider's token).
//
// Elicitation is answered by an automatic "accept with defaults" answerer:
// every field the schema gives a default is filled by the host's own
// approval.FillDefaults, nothing else; URL-mode requests are declined
// because no one is there to open a browser.
//
// # Tests
//
// conformance_test.go builds the binary and runs the pinned suite against
// it, asserting on the check ids in every checks.json (the runner's exit
// code alone accepts a client that does nothing for some scenarios).
//
// # Concurrency
//
// Main runs one scenario at a time; it owns every goroutine it starts and
// every client it opens, and closes them before it returns, except when a
// scenario overruns the deadline, in which case the process is about to
// exit anyway.
package conformance
