#!/usr/bin/env bash
# Misbehaving and diagnostic answers for toolgate-hook-command's tests, one
# per tool name (mcp__demo__<case>).
set -u

input=$(cat)
tool=$(printf '%s' "$input" | sed -n 's/.*"tool_name"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p')

case "${tool#mcp__demo__}" in
quiet) ;;
garbage) echo "this is not JSON" ;;
crash)
	echo "boom: the hook crashed" >&2
	exit 1
	;;
slow)
	sleep 30 &
	wait
	;;
silent_deny) exit 2 ;;
secret)
	echo "cannot reach the server with token $SECRET_TOKEN" >&2
	exit 1
	;;
mismatch) printf '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}\n' ;;
reserved) printf '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"a":1}}}}\n' ;;
interrupt) printf '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","interrupt":true}}}\n' ;;
bad_behavior) printf '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"maybe"}}}\n' ;;
stop) printf '{"continue":false,"stopReason":"the hook stopped this call"}\n' ;;
bad_rewrite) printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":"rm -rf /"}}\n' ;;
deny_rewrite) printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no","updatedInput":{"a":1}}}\n' ;;
ask) printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}\n' ;;
two_values) printf '{}\n{}\n' ;;
big) head -c 1100000 /dev/zero | tr '\0' ' ' ;;
dump)
	printf '%s' "$input" >"$DUMP_DIR/input.json"
	env >"$DUMP_DIR/env"
	pwd >"$DUMP_DIR/pwd"
	;;
*)
	echo "edge-cases.sh: unknown case $tool" >&2
	exit 1
	;;
esac
exit 0
