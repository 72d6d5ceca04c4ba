// Package oauthtest is a test fixture: an OAuth-protected MCP server with
// its own authorization server (protected-resource and authorization-server
// metadata, dynamic registration, an authorization endpoint that approves
// at once with a 302, PKCE-checked code exchange, refresh with optional
// rotation). Tests of the host's login, refresh and status use it; it is
// never linked into toolgate itself.
//
// A Server is safe for concurrent use.
package oauthtest
