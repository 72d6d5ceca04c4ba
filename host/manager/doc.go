// Package manager is the connection manager: it owns one [mcpclient.Client]
// per enabled server block and everything about their lives.
//
// It owns:
//   - concurrent startup, with a starting → ready|failed|cancelled event
//     per server and one startup_complete summary;
//   - the startup deadline (startup_timeout_sec) and failure texts that
//     name the fix; the aggregated error of required servers;
//   - tool filters (enabled_tools, disabled_tools), applied when listing
//     and again when calling;
//   - the live catalog: tools of every ready server, normalized by
//     [catalog.Normalize], with a revision that grows whenever any
//     server's tool list or state changes (tools/list_changed re-lists the
//     server after a short debounce);
//   - how an HTTP server authenticates (auth.go): a bearer token or
//     Authorization header, else client credentials, else a login stored
//     by `toolgate login` (package oauth), else none; and the AUTH state
//     `toolgate servers` shows;
//   - routing a call to the server that owns it ([Manager.CallTool]), and
//     reads, prompts/get, completions and subscriptions likewise
//     ([Manager.ReadResource], ...), each checked against the block's
//     resource and prompt filters; the resources, templates and prompts
//     of ready servers join the catalog, re-listed on any list_changed;
//   - crash detection, restarts with capped backoff, and shutdown of every
//     client and process.
//
// It must not decide exposure, approval or result shaping, and it never
// reads HCL: it is handed a projected [config.Config].
//
// A Manager is safe for concurrent use.
package manager
