package rules

import (
	"regexp"
	"strings"
	"unicode"
)

// destructiveVerbs are words that, in a tool's name, say it destroys
// something. "force" counts only together with "push".
var destructiveVerbs = map[string]bool{
	"delete": true, "del": true, "remove": true, "rm": true, "rmdir": true, "unlink": true,
	"drop": true, "truncate": true, "destroy": true, "purge": true, "wipe": true, "erase": true,
	"shred": true, "kill": true, "terminate": true, "uninstall": true, "revoke": true,
}

// nameWords splits a tool name into lowercase words at punctuation and
// camelCase boundaries: "forcePush_branch" → force, push, branch.
func nameWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	runes := []rune(name)
	for i, r := range runes {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && unicode.IsLower(runes[i-1]):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return words
}

// destructiveVerb returns the destructive word in a tool name, if any.
func destructiveVerb(tool string) (string, bool) {
	words := nameWords(tool)
	var force, push bool
	for _, w := range words {
		if destructiveVerbs[w] {
			return w, true
		}
		force = force || w == "force"
		push = push || w == "push"
	}
	if force && push {
		return "force push", true
	}
	return "", false
}

type pattern struct {
	what string
	re   *regexp.Regexp
}

// destructiveCommands are commands in argument values that destroy data.
var destructiveCommands = []pattern{
	{"rm -r/-f", regexp.MustCompile(`(?i)\brm\s+(-[a-z]*[rf]|--recursive|--force)`)},
	{"DROP", regexp.MustCompile(`(?i)\bdrop\s+(table|database|schema|index|view|user|collection)\b`)},
	{"TRUNCATE", regexp.MustCompile(`(?i)\btruncate\s+(table\s+)?[a-z_"` + "`" + `]`)},
	{"DELETE FROM", regexp.MustCompile(`(?i)\bdelete\s+from\b`)},
	{"git push --force", regexp.MustCompile(`(?i)\bgit\s+push\b[^\n;&|]*\s(--force\b|--force-with-lease\b|-f\b|\+)`)},
	{"git reset --hard", regexp.MustCompile(`(?i)\bgit\s+reset\s+--hard\b`)},
	{"git clean -f", regexp.MustCompile(`(?i)\bgit\s+clean\s+-[a-z]*f`)},
	{"mkfs", regexp.MustCompile(`(?i)\bmkfs(\.[a-z0-9]+)?\b`)},
	{"dd to a device", regexp.MustCompile(`(?i)\bdd\b[^\n]*\bof=/dev/`)},
	{"chmod 777", regexp.MustCompile(`(?i)\bchmod\s+(-r\s+)?0?777\b`)},
	{"kubectl delete", regexp.MustCompile(`(?i)\bkubectl\s+delete\b`)},
	{"terraform destroy", regexp.MustCompile(`(?i)\bterraform\s+destroy\b`)},
	{"a fork bomb", regexp.MustCompile(`:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:`)},
}

// credentials are secrets that should never travel in tool arguments.
var credentials = []pattern{
	{"a private key", regexp.MustCompile(`-----BEGIN ((RSA|DSA|EC|OPENSSH|PGP|ENCRYPTED) )?PRIVATE KEY( BLOCK)?-----`)},
	{"an AWS access key ID", regexp.MustCompile(`\b(AKIA|ASIA)[0-9A-Z]{16}\b`)},
	{"an AWS secret access key", regexp.MustCompile(`(?i)aws_secret_access_key\s*["']?\s*[=:]\s*["']?[A-Za-z0-9/+=]{40}`)},
	{"a GitHub token", regexp.MustCompile(`\b(gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b`)},
	{"a GitLab token", regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}`)},
	{"a Slack token", regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`)},
	{"an API secret key", regexp.MustCompile(`\bsk-(proj-|ant-|live-)?[A-Za-z0-9_-]{20,}`)},
	{"a Google API key", regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`)},
	{"a JSON Web Token", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`)},
	{"a bearer token", regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{20,}`)},
}

// secretKey reports whether an argument key names a secret.
func secretKey(key string) bool {
	k := strings.ToLower(strings.ReplaceAll(key, "-", "_"))
	switch k {
	case "password", "passwd", "passphrase", "secret", "token", "api_key", "apikey", "access_key",
		"private_key", "client_secret", "credentials", "credential", "auth_token", "access_token", "refresh_token":
		return true
	}
	return strings.HasSuffix(k, "_password") || strings.HasSuffix(k, "_secret") || strings.HasSuffix(k, "_token")
}

// pathKey reports whether an argument key names a file system path, so that
// even a relative value is checked against the workspace.
func pathKey(key string) bool {
	k := strings.ToLower(key)
	switch k {
	case "path", "paths", "file", "files", "filename", "filepath", "dir", "directory", "folder",
		"source", "destination", "dest", "target", "src", "dst", "cwd", "root", "location", "from", "to":
		return true
	}
	return strings.HasSuffix(k, "_path") || strings.HasSuffix(k, "_file") || strings.HasSuffix(k, "_dir") ||
		strings.HasSuffix(k, "path") && len(k) > 4
}

// commandKey reports whether an argument key holds a command line, whose
// words may be paths.
func commandKey(key string) bool {
	switch strings.ToLower(key) {
	case "command", "cmd", "script", "shell", "args", "argv", "commandline", "command_line":
		return true
	}
	return false
}

// hostKey reports whether an argument key holds a network destination that
// may be written without a scheme.
func hostKey(key string) bool {
	switch strings.ToLower(key) {
	case "url", "uri", "href", "endpoint", "host", "hostname", "domain", "webhook", "webhook_url", "server_url", "base_url":
		return true
	}
	return false
}

// plausiblePath reports whether the value under key should be checked as a
// path: any single-line value of a path-like key, or a short value of another
// key that reads as a path on its own and holds no spaces (so that file
// contents starting with "/*" are not taken for paths).
func plausiblePath(key, value string) bool {
	if value == "" || len(value) > 4096 || strings.ContainsAny(value, "\n\r") || strings.Contains(value, "://") && !strings.HasPrefix(value, "file://") {
		return false
	}
	if pathKey(key) {
		return true
	}
	return looksLikePath(value) && !strings.ContainsAny(value, " \t*")
}

// looksLikePath reports whether a value reads as a path on its own.
func looksLikePath(v string) bool {
	return strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~/") || v == "~" ||
		strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") || v == ".." || strings.HasPrefix(v, "file://")
}

// sensitivePath returns what a resolved path is when it holds secrets.
func sensitivePath(resolved, home string) (string, bool) {
	base := resolved[strings.LastIndexByte(resolved, '/')+1:]
	switch {
	case home != "" && (under(resolved, home+"/.ssh") || under(resolved, home+"/.aws") ||
		under(resolved, home+"/.gnupg") || under(resolved, home+"/.config/gcloud") ||
		under(resolved, home+"/.kube") || under(resolved, home+"/.docker")):
		return "a credentials directory", true
	case resolved == "/etc/shadow" || resolved == "/etc/gshadow" || resolved == "/etc/sudoers" || under(resolved, "/etc/sudoers.d"):
		return "a system credentials file", true
	case base == ".env" || strings.HasPrefix(base, ".env.") || base == ".netrc" || base == ".npmrc" || base == ".pypirc" ||
		strings.HasPrefix(base, "id_rsa") || strings.HasPrefix(base, "id_ed25519") || strings.HasPrefix(base, "id_ecdsa") ||
		strings.HasSuffix(base, ".pem") || strings.HasSuffix(base, ".key"):
		return "a secrets file", true
	}
	return "", false
}

func under(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+"/")
}
