// Package tokenauthtest is an OAuth issuer for tests: an httptest server
// with OpenID discovery and a JWKS, which mints signed access tokens and
// can rotate its keys. It counts JWKS fetches so tests can tell a
// refresh happened.
//
// It must only be imported by tests.
package tokenauthtest
