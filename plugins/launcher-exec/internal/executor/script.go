package executor

import (
	"strings"
)

// Lines the start script writes to stderr when it gives up, so that Start
// can tell the script's own verdicts from the executor's errors.
const (
	scriptTag         = "toolgate-launcher-exec: "
	notFoundLine      = scriptTag + "command not found: "
	dirMissingLine    = scriptTag + "cannot change to directory: "
	readyMarkerPrefix = scriptTag + "ready "
)

// shellQuote quotes s for a POSIX shell: everything between single quotes
// is literal, and each single quote inside becomes this (close the quotes,
// an escaped quote, reopen):
//
//	'\''
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// startScript is the POSIX shell script that runs a command where the
// executor cannot pass env or cwd itself (ssh, kubectl, nomad, ...):
//
//	cd -- DIR || fail; export NAME='value' ...;
//	command -v CMD || fail; printf MARKER >&2; exec CMD ARGS
//
// The marker line tells Start that the executor reached the remote side
// and the command is about to run. With useArgv the command and args are
// not in the script but passed after it as $0 and $@ (sh -c SCRIPT CMD
// ARGS...), which keeps them off the script. env must hold only shell
// identifiers (checked by the caller).
type startScript struct {
	dir     string
	env     []envEntry
	command string
	args    []string
	marker  string
	useArgv bool
}

type envEntry struct{ name, value string }

func (s startScript) String() string {
	var b strings.Builder
	if s.dir != "" {
		b.WriteString("cd -- " + shellQuote(s.dir) + " || { printf '%s\\n' " +
			shellQuote(dirMissingLine+s.dir) + " >&2; exit 125; }; ")
	}
	if len(s.env) > 0 {
		b.WriteString("export")
		for _, e := range s.env {
			b.WriteString(" " + e.name + "=" + shellQuote(e.value))
		}
		b.WriteString("; ")
	}
	cmd := shellQuote(s.command)
	if s.useArgv {
		cmd = `"$0"`
	}
	if strings.Contains(s.command, "/") {
		b.WriteString("[ -f " + cmd + " ] && [ -x " + cmd + " ]")
	} else {
		b.WriteString("command -v " + cmd + " >/dev/null 2>&1")
	}
	b.WriteString(" || { printf '%s\\n' " + shellQuote(notFoundLine+s.command) + " >&2; exit 127; }; ")
	b.WriteString("printf '%s\\n' " + shellQuote(s.marker) + " >&2; ")
	if s.useArgv {
		b.WriteString(`exec "$0" "$@"`)
		return b.String()
	}
	b.WriteString("exec " + cmd)
	for _, a := range s.args {
		b.WriteString(" " + shellQuote(a))
	}
	return b.String()
}
