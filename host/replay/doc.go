// Package replay re-decides the tool calls recorded in an audit ledger
// with a candidate configuration's approval chain — approval modes,
// remembered approvals in the config, permission and PreToolUse hook
// plugins, the Guardian (its rules engine; an LLM engine only when asked)
// — and reports the calls whose decision would change, grouped by the
// step that caused the change.
//
// It runs host/approval's Procedure itself (the decide stage), with an
// Asker that never reaches a human: a call that would be put to the user
// is reported as "ask". It must not execute anything, connect to any MCP
// server, write the candidate's config or audit log, or ask a human.
// Hook and Guardian plugins are real processes started through
// host/pluginhost and stopped by Close.
package replay
