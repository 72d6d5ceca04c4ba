#!/usr/bin/env bash
# A permission hook written for Codex (hooks.json: PermissionRequest and
# PreToolUse, matcher "mcp__.*"), used unchanged by toolgate-hook-command's
# tests. Pure bash + sed, so it needs no jq or python.
#
#   - deleting or dropping anything: denied with exit 2 and a message on stderr;
#   - reading or listing files: allowed;
#   - any tool of the "web" server: denied with a JSON decision;
#   - writing a file by absolute or ../ path: rewritten into sandbox/;
#   - shell tools: blocked with the legacy {"decision":"block"} output;
#   - everything else: no decision (empty stdout).
set -u

input=$(cat)

# field NAME prints the first string value of "NAME" in the input.
field() {
	printf '%s' "$input" | sed -n 's/.*"'"$1"'"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' | head -n 1
}

event=$(field hook_event_name)
tool=$(field tool_name)

case "$tool" in
mcp__*__delete_* | mcp__*__drop_*)
	echo "Deleting is not allowed by the project's hook; ask the user to do it." >&2
	exit 2
	;;
esac

case "$event" in
PermissionRequest)
	case "$tool" in
	mcp__files__read_* | mcp__files__list_*)
		printf '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}\n'
		;;
	mcp__web__*)
		printf '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"Network tools need the user to approve them."}}}\n'
		;;
	esac
	;;
PreToolUse)
	case "$tool" in
	mcp__files__write_file)
		path=$(field path)
		case "$path" in
		/* | ../*)
			printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"writes outside the project go to sandbox/","updatedInput":{"path":"sandbox/%s","content":"%s"}}}\n' \
				"${path##*/}" "$(field content)"
			;;
		esac
		;;
	mcp__shell__*)
		printf '{"decision":"block","reason":"Shell tools are disabled in this project."}\n'
		;;
	esac
	;;
esac
exit 0
