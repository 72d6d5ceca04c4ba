// Package rules is the Guardian's deterministic engine: it scores the risk
// of a tool call from what it can see without a model, and denies the call
// when the risk reaches a threshold.
//
// Signals, each with a risk level (the call's risk is the highest):
//
//   - annotations: read-only → low; destructive or open-world (declared, or
//     undeclared, which MCP reads as both) → medium;
//   - destructive verbs in the tool's name (delete, drop, truncate, purge,
//     force + push, …) → high;
//   - destructive commands in argument values (rm -rf, DROP TABLE, TRUNCATE,
//     DELETE FROM, git push --force, git reset --hard, mkfs, …) → high;
//   - paths outside the workspace (absolute, ~, ../, file:// values, and
//     values of path-like keys, resolved symlink-safe) → high for a tool that
//     is not read-only, medium for one that is; well-known secret locations
//     (~/.ssh, ~/.aws, /etc/shadow, .env, …) → high even for reads;
//   - credentials in arguments (private keys, AWS keys, GitHub/GitLab/Slack
//     tokens, API keys, JWTs, bearer tokens) → critical; a non-empty value
//     under a secret-named key (password, token, api_key, …) → high;
//   - network destinations: a URL whose host is not in allowed_hosts → high
//     (medium when no allowed_hosts list is configured).
//
// A server's trust then moves the level: trust "high" one level down, "low"
// one level up. The outcome is deny when the level is at or above the
// threshold (default high), allow otherwise. The rationale names the
// strongest reasons; it never quotes a credential. User authorization is
// always unknown: the engine cannot read the conversation.
//
// What it must not do: contact the network, read files (path checks only
// resolve symlinks), or keep state between calls.
//
// Concurrency: an *Engine is immutable and safe for concurrent use.
package rules
