// Package tokenauth validates the OAuth 2.1 / OIDC access tokens (JWT)
// toolgate serve accepts when its serve block has an auth block, and
// describes the gateway as a protected resource (RFC 9728) so clients
// know where to log in.
//
// It owns the issuer's signing keys: fetched from its JWKS (discovered
// from the issuer's metadata unless configured), cached, and fetched
// again when a token names an unknown key id, at most once per
// refresh interval so that forged key ids cannot make it hammer the
// issuer. Signatures, iss, aud, exp, nbf and the required scopes are
// checked with go-jose; the caller's identity (host/identity) comes out.
// An accepted token is remembered by its SHA-256 until it expires, so
// the requests of a session after the first skip the signature check.
//
// It must not log or return token text: tokens are credentials. It does
// not decide what a caller may do; hooks and limits do. It takes its own
// [Policy], not config types (host/gateway translates the auth block),
// and must not import host/config.
package tokenauth
