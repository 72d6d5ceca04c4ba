// Package command is the toolgate-hook-command plugin: it runs an external
// program for each PermissionRequest and PreToolUse event, so that permission
// hooks can be written in any language, and speaks the Codex hook protocol
// (which follows Claude Code's) so that existing Codex hook scripts work
// unchanged.
//
// # Protocol
//
// The program gets one JSON object on stdin:
//
//	{"session_id": "…", "turn_id": "…", "transcript_path": null, "cwd": "/work",
//	 "hook_event_name": "PermissionRequest" | "PreToolUse", "model": "",
//	 "permission_mode": "default" | "bypassPermissions",
//	 "tool_name": "mcp__files__write_file", "tool_input": {…}, "tool_use_id": "…",
//	 "toolgate": {"server": "files", "tool": "write_file", "annotations": {…}, …}}
//
// toolgate has no turns visible to hooks: turn_id and tool_use_id carry the
// call id. model is empty (the host does not tell hooks which model runs).
// permission_mode is "bypassPermissions" when the approval policy is never.
// The "toolgate" object is an extension Codex does not send.
//
// It answers through its exit status and stdout:
//
//   - exit 0, empty stdout: no decision (PreToolUse: the call continues);
//   - exit 0, a JSON object on stdout:
//     {"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"|"deny","message":"…"}}};
//     for PreToolUse {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"|"deny"|"ask",
//     "permissionDecisionReason":"…","updatedInput":{…}}} (updatedInput rewrites the arguments),
//     or the legacy {"decision":"block","reason":"…"}; {"continue":false,"stopReason":"…"} denies too;
//   - exit 2 with a message on stderr: deny / block with that message;
//   - anything else (another exit status, a signal, stdout that is not such
//     a JSON object, exit 2 with nothing on stderr, the timeout, more than
//     1 MiB of output): the hook failed; the plugin returns an error and the
//     host applies the plugin block's on_error.
//
// As in Codex, updatedInput, updatedPermissions and interrupt inside a
// PermissionRequest decision are reserved and make the hook fail closed.
// A PreToolUse "allow" cannot approve a call in toolgate: it only lets the
// call continue to the approval procedure.
//
// # Isolation
//
// The program starts with only PATH and HOME from the plugin's environment
// plus the env map of the config, in the call's cwd when it exists, in a
// containment cell of its own (internal/contain: its process group, and on
// Linux a cgroup or the subreaper's walk, on Windows a Job Object); on
// timeout or cancellation everything in the cell is killed, and what the
// program leaves running when it exits gets SIGTERM, then SIGKILL.
// Secrets in env values are redacted from the error texts the plugin
// returns.
//
// What it must not do: import the host or the MCP SDK, run the program through
// a shell (argv is executed as given), or log tool arguments.
//
// Concurrency: a *Command is safe for concurrent use; every event runs its
// own process. Configure swaps the settings atomically.
package command
