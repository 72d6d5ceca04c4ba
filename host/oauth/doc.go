// Package oauth owns the host's OAuth credentials and the login flow for
// Streamable HTTP servers. The protocol work — metadata discovery, client
// registration, PKCE, step-up, the code exchange — is go-sdk's
// (auth.AuthorizationCodeHandler, auth/extauth, oauthex); this package
// fills in what the host decides:
//
//   - the credentials file ([Store]): one entry per server name and URL, in
//     <user config dir>/toolgate/credentials.json (or $TOOLGATE_CREDENTIALS),
//     mode 0600, written atomically under a cross-process lock so that
//     concurrent hosts do not clobber each other; a corrupt file is an
//     error that says so ([CorruptError]), never a silent logout;
//   - tokens that refresh themselves 30 s before expiry, persist only when
//     they changed, and store a rotated refresh token at once;
//   - the interactive login ([Login]): a loopback callback on 127.0.0.1,
//     the browser opened when there is one and the URL printed always;
//     dynamic registration, a client ID metadata document, or the
//     pre-registered client of the server block;
//   - the runtime handler ([NewStored]) that never starts a login: it
//     refreshes, adopts a token another host refreshed, or says to run
//     `toolgate login <server>`;
//   - what go-sdk lacks: the 2025-03-26 metadata fallback (an
//     authorization server whose metadata names another issuer), refusing
//     protected-resource metadata for another resource, client credentials
//     with a private-key JWT, and cross-app access (SEP-990 ID-JAG).
//
// It must not speak MCP: it sees the HTTP requests and answers go-sdk's
// transport hands its handlers, nothing else. Secrets (tokens, client
// secrets, keys) never reach its logs or error texts.
//
// Concurrency: a Store may be shared by goroutines and processes. Every
// handler is safe for concurrent use; a Login serves one login at a time.
package oauth
