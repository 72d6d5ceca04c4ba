package mcpclient

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// BodyPreviewBytes bounds the part of an unusable response body that an
// error quotes.
const BodyPreviewBytes = 8192

// maxCountedBody bounds how much of a long body is read just to say how
// much was cut.
const maxCountedBody = 8 << 20

const redacted = "[REDACTED]"

// bodyPreview returns at most BodyPreviewBytes of body, with every secret
// the request carried and anything shaped like a credential redacted, and
// "... (truncated N bytes)" when there was more.
func bodyPreview(body io.Reader, secrets []string) string {
	// Read a little past the limit so a secret cut at the limit is still
	// recognized and redacted whole.
	head, _ := io.ReadAll(io.LimitReader(body, BodyPreviewBytes+1024))
	rest, _ := io.Copy(io.Discard, io.LimitReader(body, maxCountedBody))
	text := redact(strings.ToValidUTF8(string(head), "\uFFFD"), secrets)
	total := int64(len(head)) + rest
	if total <= BodyPreviewBytes {
		return text
	}
	cut := min(len(text), BodyPreviewBytes)
	for cut > 0 && cut < len(text) && !utf8.RuneStart(text[cut]) {
		cut--
	}
	more := ""
	if rest == maxCountedBody {
		more = "more than "
	}
	return fmt.Sprintf("%s... (truncated %s%d bytes)", text[:cut], more, total-BodyPreviewBytes)
}

var credentialPatterns = []struct {
	re   *regexp.Regexp
	repl string
}{
	// Authorization-style values: "Bearer abc", "Basic xyz=".
	{regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{4,}`), "$1 " + redacted},
	// JSON members named like credentials: "access_token": "…".
	{regexp.MustCompile(`(?i)("[a-z0-9_-]*(?:token|secret|password|passwd|api[_-]?key|apikey|credential|assertion|code_verifier)[a-z0-9_-]*"\s*:\s*)"[^"]*"`), `$1"` + redacted + `"`},
	// Plain-text "NAME: value" lines, as servers print them: GITHUB_TOKEN: ghp_….
	{regexp.MustCompile(`(?i)\b([a-z0-9_-]*(?:token|secret|password|passwd|api[_-]?key|apikey)[a-z0-9_-]*:[ \t]*)[^\s"',;]+`), "${1}" + redacted},
	// Form and query parameters: access_token=…&.
	{regexp.MustCompile(`(?i)\b([a-z0-9_-]*(?:token|secret|password|passwd|api[_-]?key|apikey|assertion|code_verifier)[a-z0-9_-]*=)[^&\s"']+`), "${1}" + redacted},
}

// redact removes known secret values, well-known credential formats and
// credential-shaped substrings.
func redact(s string, secrets []string) string {
	s = RedactSecretFormats(redactValues(s, secrets))
	for _, p := range credentialPatterns {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	return s
}

// redactValues removes known secret values only: for text such as a
// server's own log, where credential-shaped words are common and mostly
// harmless ("token: expired").
func redactValues(s string, secrets []string) string {
	for _, v := range secrets {
		if len(v) >= 4 {
			s = strings.ReplaceAll(s, v, redacted)
		}
	}
	return s
}

// credentialName reports whether a header or an environment variable
// carries a secret, by its name.
func credentialName(name string) bool {
	n := strings.ToLower(name)
	if n == "authorization" || n == "proxy-authorization" || n == "cookie" {
		return true
	}
	for _, w := range []string{"token", "secret", "key", "password", "auth", "credential", "session"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// requestSecrets lists the values of a request's credential headers, and
// the bare credential of an Authorization value, for redaction.
func requestSecrets(h http.Header) []string {
	var out []string
	for k, vs := range h {
		if !credentialName(k) {
			continue
		}
		for _, v := range vs {
			out = append(out, v)
			if _, cred, ok := strings.Cut(v, " "); ok {
				out = append(out, strings.TrimSpace(cred))
			}
		}
	}
	return out
}

// envSecrets lists the values of a process environment's (KEY=VALUE)
// variables whose names say they carry a secret, for redaction.
func envSecrets(env []string) []string {
	var out []string
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && credentialName(k) {
			out = append(out, v)
		}
	}
	return out
}

// Secrets holds values that must never come back out of toolgate: the
// credential-named environment values a server was given, the values of
// its credential headers, and every Authorization credential sent to it
// (OAuth access tokens included, learned as requests go out). A server
// that echoes one has it replaced by [REDACTED].
//
// Each Client keeps its own set; a set shared through Options.Secrets
// also receives every value, for records about no single server (the
// audit log). The zero value is an empty set; it is safe for concurrent
// use.
type Secrets struct {
	mu     sync.RWMutex
	values []string
	known  map[string]bool
	also   *Secrets // receives every value added here; nil: none
}

// Add records values; ones shorter than 4 bytes are ignored (they would
// redact ordinary words).
func (s *Secrets) Add(values ...string) {
	s.mu.Lock()
	for _, v := range values {
		if len(v) < 4 || s.known[v] {
			continue
		}
		if s.known == nil {
			s.known = map[string]bool{}
		}
		s.known[v] = true
		// Longest first, so a secret that contains another is replaced
		// whole rather than leaving its remainder.
		i, _ := slices.BinarySearchFunc(s.values, v, func(a, b string) int { return len(b) - len(a) })
		s.values = slices.Insert(s.values, i, v)
	}
	s.mu.Unlock()
	if s.also != nil {
		s.also.Add(values...)
	}
}

// addFromHeader records the credentials of an outgoing request's header.
func (s *Secrets) addFromHeader(h http.Header) {
	if h.Get("Authorization") == "" && h.Get("Proxy-Authorization") == "" {
		return
	}
	s.Add(requestSecrets(h)...)
}

// RedactRecord is Redact followed by RedactSecretFormats: what every
// record of toolgate's own (the audit log, log lines) applies to text a
// server or a model wrote.
func (s *Secrets) RedactRecord(text string) string {
	return RedactSecretFormats(s.Redact(text))
}

// Redact replaces every recorded value in text.
func (s *Secrets) Redact(text string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return redactValues(text, s.values)
}

// redactError is err with its text redacted. errors.Is and errors.As
// still reach the original through Unwrap; only the text changes, so no
// caller that prints the error can show a secret.
func (s *Secrets) redactError(err error) error {
	if err == nil {
		return nil
	}
	text := err.Error()
	if clean := s.Redact(text); clean != text {
		return &redactedError{text: clean, err: err}
	}
	return err
}

type redactedError struct {
	text string
	err  error
}

func (e *redactedError) Error() string { return e.text }
func (e *redactedError) Unwrap() error { return e.err }
