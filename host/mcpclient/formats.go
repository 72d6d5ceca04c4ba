package mcpclient

import (
	"regexp"
	"strings"
)

// SecretFormat is one well-known credential format: a token that says
// what it is by its shape (a prefix, a fixed layout), so it can be
// recognized in text nobody told toolgate about — a server printing a
// key it found, an error quoting a config file.
type SecretFormat struct {
	Name string // what it is, for tests and documentation
	// hints are substrings one of which every match contains; text with
	// none is not searched, which keeps the common case (no secret)
	// cheap.
	hints []string
	re    *regexp.Regexp
	// wordStart: a match must not continue a word ("task-…" is no
	// "sk-…" key). An escaped "\n", "\r" or "\t" counts as a word's
	// start: inside encoded JSON a token often follows one.
	wordStart bool
	// keepPrefix matches the leading part of a match that stays (the
	// "Bearer " of an Authorization value), so the text still says what
	// was there.
	keepPrefix *regexp.Regexp
}

// SecretFormats are the formats RedactSecretFormats replaces: the one
// place they are listed. Each is anchored on a prefix or a layout no
// ordinary word has, so prose and identifiers are left alone. Character
// classes never include '"' or '\', so a replacement inside encoded JSON
// (an audit record) keeps the JSON valid. Lengths are open-ended ({36,}
// rather than {36,255}): a bounded repeat makes the matcher's program,
// and its time, many times larger.
var SecretFormats = []SecretFormat{
	{Name: "AWS access key ID", hints: []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"}, wordStart: true,
		re: regexp.MustCompile(`(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b`)},
	{Name: "GitHub token (ghp_, gho_, ghu_, ghs_, ghr_)", hints: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, wordStart: true,
		re: regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{36,}\b`)},
	{Name: "GitHub fine-grained token (github_pat_)", hints: []string{"github_pat_"}, wordStart: true,
		re: regexp.MustCompile(`github_pat_[A-Za-z0-9_]{22,}`)},
	{Name: "GitLab token (glpat-)", hints: []string{"glpat-"}, wordStart: true,
		re: regexp.MustCompile(`glpat-[A-Za-z0-9_-]{20,}`)},
	{Name: "Slack token (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xoxe-)", hints: []string{"xox"}, wordStart: true,
		re: regexp.MustCompile(`xox[abeprs]-[A-Za-z0-9-]{10,}`)},
	{Name: "Slack webhook URL", hints: []string{"hooks.slack.com/services/"},
		re: regexp.MustCompile(`https://hooks\.slack\.com/services/[A-Za-z0-9_/]{20,}`)},
	{Name: "Google API key (AIza)", hints: []string{"AIza"}, wordStart: true,
		re: regexp.MustCompile(`AIza[0-9A-Za-z_-]{35}`)},
	{Name: "Stripe key (sk_live_, rk_live_, sk_test_)", hints: []string{"k_live_", "k_test_"}, wordStart: true,
		re: regexp.MustCompile(`[rs]k_(?:live|test)_[0-9A-Za-z]{16,}`)},
	{Name: "OpenAI or Anthropic key (sk-, sk-proj-, sk-ant-)", hints: []string{"sk-"}, wordStart: true,
		re: regexp.MustCompile(`sk-[A-Za-z0-9_-]{20,}`)},
	{Name: "npm token (npm_)", hints: []string{"npm_"}, wordStart: true,
		re: regexp.MustCompile(`npm_[A-Za-z0-9]{36}\b`)},
	{Name: "PyPI token (pypi-)", hints: []string{"pypi-AgE"}, wordStart: true,
		re: regexp.MustCompile(`pypi-AgE[A-Za-z0-9_-]{50,}`)},
	{Name: "JSON Web Token", hints: []string{"eyJ"}, wordStart: true,
		re: regexp.MustCompile(`eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}`)},
	{Name: "Authorization value (Bearer …)", hints: []string{"Bearer", "bearer", "BEARER"}, wordStart: true,
		re:         regexp.MustCompile(`(?i:bearer)(?:[ \t]|\\t)+[A-Za-z0-9._~+/=-]{8,}`),
		keepPrefix: regexp.MustCompile(`^(?i:bearer)(?:[ \t]|\\t)+`)},
	// A private key block, whole; in encoded JSON its newlines are "\n"
	// escapes, which the body class allows. A block cut before its END
	// line (a truncated result) is redacted from BEGIN to where the key
	// text stops.
	{Name: "PEM private key block", hints: []string{"PRIVATE KEY-----"}, re: regexp.MustCompile(
		`-----BEGIN[A-Z0-9 ]* PRIVATE KEY-----(?:[^"-]|-[^"-])*?-----END[A-Z0-9 ]* PRIVATE KEY-----` +
			`|-----BEGIN[A-Z0-9 ]* PRIVATE KEY-----(?:[A-Za-z0-9+/=:,. \t\r\n]|\\[rn])*`)},
}

// RedactSecretFormats replaces every well-known credential format in s
// (SecretFormats) with [REDACTED]; an Authorization value keeps its
// scheme ("Bearer [REDACTED]"). It is what the audit log and toolgate's
// logs apply to everything a server wrote, on top of the values the
// server was given (Secrets).
func RedactSecretFormats(s string) string {
	for i := range SecretFormats {
		s = SecretFormats[i].redact(s)
	}
	return s
}

func (f *SecretFormat) redact(s string) string {
	hinted := false
	for _, h := range f.hints {
		if strings.Contains(s, h) {
			hinted = true
			break
		}
	}
	if !hinted {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range f.re.FindAllStringIndex(s, -1) {
		if f.wordStart && !startsWord(s, m[0]) {
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:m[0]])
		if f.keepPrefix != nil {
			b.WriteString(f.keepPrefix.FindString(s[m[0]:m[1]]))
		}
		b.WriteString(redacted)
		last = m[1]
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// startsWord reports whether s[i:] begins a word: nothing before it, a
// character that is not a letter, digit or '_', or an escaped newline,
// CR or tab.
func startsWord(s string, i int) bool {
	if i == 0 {
		return true
	}
	c := s[i-1]
	if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		return true
	}
	return i >= 2 && s[i-2] == '\\' && (c == 'n' || c == 'r' || c == 't')
}
