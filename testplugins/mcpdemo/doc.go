// Package mcpdemo is mcp-demo, toolgate's own scriptable MCP server for
// tests. Every host test that needs a real server (discovery, approval,
// execution, gateway, launchers) runs the mcp-demo binary as a subprocess;
// the flags below switch on the behaviours those tests assert, and each is
// deterministic so tests wait on output lines and responses, never on time.
//
// The package owns the server (tools, flags, transports, process
// behaviour). It must not import anything from toolgate's host/ tree: it
// plays the part of an independent third-party server. The binary is
// testplugins/mcp-demo, a few lines over [Main].
//
// # Transports
//
// stdio is the default: newline-delimited JSON on stdin/stdout, exit status
// 0 when stdin reaches EOF (in-flight calls are cancelled). A received
// SIGTERM keeps its default meaning and ends the process at once.
//
//	--http ADDR   serve Streamable HTTP at http://ADDR/mcp with stateful
//	              sessions (go-sdk NewStreamableHTTPHandler). Once the
//	              listener accepts, stderr gets the line
//	              "listening on http://HOST:PORT/mcp" with the real port when
//	              ADDR ends in :0. SIGINT/SIGTERM shut it down with status 0.
//	              Request bodies up to 64 MiB are accepted (4 MiB echo_big
//	              round trips). Stateful go-sdk HTTP sessions negotiate
//	              2025-11-25 at most.
//
// # Identity
//
//	--name NAME          serverInfo.name (default "mcp-demo"); version is [Version].
//	--instructions TEXT  server instructions returned by initialize/server/discover.
//	--root DIR           directory write_file and delete_file may touch
//	                     (default: the working directory at call time).
//
// # Default tools
//
// Registered unless --no-default-tools. "readOnly" means annotations
// {readOnlyHint: true}; other hints are left unset unless listed.
//
//	echo {text}                readOnly; one text block with the same text.
//	add {a, b}                 readOnly; text with the sum and structuredContent
//	                           {"sum": n}, with an outputSchema.
//	write_file {path, content} destructiveHint:false, openWorldHint:false,
//	                           readOnlyHint:false. Writes under --root (parents
//	                           created). A path that leaves the root (.., an
//	                           absolute path, a symlink out) is an isError result.
//	delete_file {path}         destructiveHint:true; deletes under --root.
//	image                      readOnly; a 2x2 PNG ([DemoPNG]) plus a text block.
//	audio                      readOnly; a short WAV ([DemoWAV]).
//	resource_link              readOnly; one resource_link block.
//	embedded_resource          readOnly; one embedded text resource.
//	structured                 readOnly; structuredContent {city, temperature_c,
//	                           conditions} with an outputSchema plus a text block.
//	mixed                      readOnly; text, image, audio, resource link and
//	                           embedded resource in one result.
//	fail {message}             readOnly; isError:true with that message as text.
//	slow {ms}                  readOnly; waits ms milliseconds, stopping early
//	                           when the call is cancelled; returns [SlowTiming]
//	                           JSON {"start","end","pid"} in unix nanos, so tests
//	                           can check overlap of parallel calls.
//	slow_write {ms}            the same without any annotations (not read-only),
//	                           to prove hosts serialize non-read-only calls.
//	progress {steps}           readOnly; sends steps notifications/progress for
//	                           the request's progress token, then returns.
//	elicit {message}           readOnly; form elicitation with fields name
//	                           (string, default "anon"), age (integer) and color
//	                           (red|green|blue); returns [ElicitOutcome] JSON
//	                           {"action","content"}.
//	elicit_url {message}       readOnly; URL-mode elicitation of [ElicitURL];
//	                           returns [ElicitOutcome] JSON.
//	env {names}                readOnly; JSON object of those variables as the
//	                           server sees them (missing = null) plus "cwd".
//	pid                        readOnly; JSON {"pid","ppid"}.
//	big {bytes}                readOnly; one text block of exactly bytes bytes,
//	                           [BigText] (0..256 MiB).
//	echo_big {data}            readOnly; returns data unchanged (4 MiB round trips).
//	mutate_tools {add, remove} adds tools (each answers "ok") and removes tools
//	                           by name at runtime; go-sdk announces every change
//	                           with notifications/tools/list_changed.
//
// The elicitation tools use go-sdk's multi-round-trip input requests: a
// 2026-07-28 client answers them and retries the call (the call log then
// shows two tools/call lines); for older clients go-sdk turns them into
// elicitation/create. A client without an elicitation handler gets an error.
//
// # Extra tool sets
//
//	--no-default-tools   register none of the default tools above.
//	--tools N            N tools gen_00001.. ([GeneratedToolName]) with distinct
//	                     English descriptions ([GeneratedToolDescription]) and a
//	                     small input schema; each answers "gen_NNNNN ok".
//	--long-names         tools named by [LongToolNames]: 130 and 200 bytes.
//	--colliding-names    tools tool-name, tool_name and tool.name.
//	--crash-tool         crash: prints "panic: crashing on purpose ..." to
//	                     stderr and exits with status 3 ([CrashExitCode])
//	                     in the middle of the call, without answering it.
//	--hostile-text       a tool [HostileToolName] whose name, description and
//	                     result, and a stderr line at start, carry terminal
//	                     escapes, a NUL and a bidi override ([HostileText]).
//	--hidden-tool        hidden_tool with _meta.ui.visibility = ["app"].
//	--connector-meta     every tool's _meta carries [ConnectorMeta]:
//	                     connector_id, connector_name, connector_display_name,
//	                     connector_description, connectorDescription (a host
//	                     must drop them) and keep_me (a host must keep it).
//	--annotation-matrix  one tool per readOnlyHint in {false,true} x
//	                     destructiveHint in {unset,true,false} x openWorldHint
//	                     in {unset,true,false}, named hint_ro<0|1>_d<u|1|0>_ow<u|1|0>
//	                     (e.g. hint_ro0_du_ow0), plus hint_none with no
//	                     annotations object; each answers "ok".
//	--add-tool-after-initialized NAME
//	                     when notifications/initialized arrives, add tool NAME
//	                     (answers "ok"); go-sdk sends tools/list_changed. Only
//	                     the legacy handshake sends that notification, so this
//	                     needs a client on 2025-11-25 or older.
//
// # Resources and prompts
//
//	--resources N     offer text resources demo://doc/00001..N ("document I"),
//	                  the template demo://item/{id} ("item <id>"), the prompt
//	                  greet (argument name, completed from alice, albert,
//	                  bob), resources/subscribe, and the tools touch_resource
//	                  {uri} (sends resources/updated) and add_resource {uri,
//	                  text} (adds one; resources/list_changed follows).
//
// # Listing
//
//	--page-size N     tools/list returns N tools per page (go-sdk PageSize).
//	--repeat-cursor   broken server: every tools/list (and resources/list)
//	                  answer is the first page with nextCursor
//	                  "mcp-demo-repeat", forever.
//
// # Misbehaviour on purpose
//
//	--crash-after N       after the response to the Nth tools/call has been
//	                      written, exit with status 3 ([CrashExitCode]).
//	--stderr-flood N      at start (before --exit-immediately), write N lines
//	                      "mcp-demo: flood line I" to stderr, I = 0..N-1.
//	--stderr-noise        write a stderr line at start and for every received
//	                      message: "mcp-demo: noise: received <method>".
//	--ignore-unknown      emulate an old server that never answers requests it
//	                      does not know (notably server/discover, which hangs the
//	                      go-sdk client's default probe); it also offers only
//	                      protocol versions before 2026-07-28. On stdio the
//	                      requests are dropped below go-sdk, from the
//	                      transport's Connection; over HTTP the POST is held
//	                      until the client gives up.
//	--hang-initialize     stdio: never answer initialize or server/discover (a
//	                      server stuck in its handshake).
//	--initialize-gate ADDR
//	                      stdio: hold initialize and server/discover until a
//	                      TCP connection to ADDR delivers one byte (a server
//	                      that starts exactly when a test lets it); the
//	                      session ends if the connection fails.
//	--fail-initialize     answer initialize and server/discover with the
//	                      JSON-RPC error "initialize refused by --fail-initialize".
//	--exit-immediately CODE
//	                      print "fatal: demo startup failure" to stderr and exit
//	                      with CODE before reading anything.
//	--ignore-sigterm      ignore SIGTERM and stdin EOF: only SIGKILL ends it.
//	--stray-responses     stdio: follow every response with a response whose
//	                      "id" is null and one without an id (raw lines go-sdk
//	                      cannot encode); a client must skip both.
//	--bad-tools           stdio: every tools/list answer also lists a tool whose
//	                      name is the number 5, one whose name holds a lone
//	                      UTF-16 surrogate (\ud800), and a second "echo".
//	--leak-secrets        register leak_secrets: prints [SecretCanaries] (fake
//	                      AWS key, ghp_, github_pat_, xoxb-, JWT, Bearer and
//	                      PEM private key) to stderr and returns them as text.
//	--deep-schema LEVELS  stdio: every tools/list answer also lists deep_schema,
//	                      whose input schema nests LEVELS object levels
//	                      ([DeepSchema]; each level is two JSON levels).
//	--deep-result DEPTH   register deep_result, whose structuredContent nests
//	                      DEPTH JSON levels ([DeepValue]).
//	--huge-descriptions   register huge_1, huge_2 and huge_3, each with a
//	                      4 MiB description ([HugeDescriptionBytes]).
//	--list-changed-storm INTERVAL
//	                      stdio: once notifications/initialized arrives, send
//	                      notifications/tools/list_changed every INTERVAL
//	                      (e.g. 2ms) until the session ends, undebounced.
//	--spawn-escaping-child FILE
//	                      at start, re-execute this binary as a long sleeper
//	                      in a session of its own (setsid, out of the process
//	                      group) that inherits stdout and stderr, and write its
//	                      pid to FILE: the server's pipes outlive the server.
//	--spawn-family FILE   at start, re-execute this binary as three long
//	                      sleepers in the server's process group; the first
//	                      starts a fourth in a session of its own (setsid), as
//	                      servers that start language servers or browsers do.
//	                      FILE (or FIFO) gets the line "SERVER CHILD CHILD CHILD
//	                      GRANDCHILD" (pids, one write once all run) so tests can
//	                      check that every one of them ends with the server.
//	--spawn-child         at start, re-execute this binary as a long sleeper in
//	                      the same process group and print "child pid N" to
//	                      stderr; proves a host kills the whole group. The
//	                      child runs the hidden flag --sleep-forever, so no
//	                      external tool is needed.
//
// # Observability and capabilities
//
//	--call-log FILE       append one JSON line per received tools/call:
//	                      {"event":"call","tool":…,"arguments":…,"meta":…,"pid":…}
//	                      and per cancelled call {"event":"cancelled","tool":…,"pid":…}.
//	                      meta is the request's _meta as received; under
//	                      2026-07-28 it includes the protocol's own
//	                      io.modelcontextprotocol/* keys.
//	                      The file is opened O_APPEND and every line is one
//	                      write, so concurrent servers can share it.
//	--sandbox-capability NAME
//	                      declare capabilities.experimental[NAME] = {}
//	                      (repeatable; e.g. toolgate/sandbox-state,
//	                      codex/sandbox-state-meta).
//	--log-messages        each tools/call also sends an info-level
//	                      notifications/message (after the client set a level).
//	--protocol-versions V1,V2
//	                      accept only these protocol versions
//	                      (go-sdk ServerOptions.SupportedProtocolVersions).
//
// # Exit status
//
// 0: stdin EOF (stdio) or SIGINT/SIGTERM (HTTP). 1: serving error.
// 2: usage error. 3: --crash-after. CODE: --exit-immediately.
//
// # Concurrency
//
// A [Demo] is safe for concurrent use; go-sdk runs tool calls concurrently,
// and the call log and stderr are written one whole line per Write. Tools
// added or removed by mutate_tools are shared by every session of the
// process.
package mcpdemo
