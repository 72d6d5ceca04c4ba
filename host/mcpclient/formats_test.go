package mcpclient

import (
	"encoding/json"
	"strings"
	"testing"
)

// canary builds a token from parts, so this file holds no string that a
// secret scanner would take for a real credential.
func canary(parts ...string) string { return strings.Join(parts, "") }

// TestRedactSecretFormats: one canary per well-known format is replaced,
// in plain text and inside encoded JSON (which stays valid), and text
// that merely looks close is left alone.
func TestRedactSecretFormats(t *testing.T) {
	pem := canary("-----BEGIN RSA PRIVATE", " KEY-----\nMIIEowIBAAKCAQEAx4Nq0Zt\nAbCdEf0123==\n-----END RSA PRIVATE", " KEY-----")
	for _, tc := range []struct {
		format, secret, want string
	}{
		{"AWS access key ID", canary("AKIA", "IOSFODNN7EXAMPLE"), redacted},
		{"AWS access key ID", canary("ASIA", "Y34FZKBOKMUTVV7A"), redacted},
		{"GitHub token (ghp_, gho_, ghu_, ghs_, ghr_)", canary("ghp_", strings.Repeat("a1B2", 9)), redacted},
		{"GitHub token (ghp_, gho_, ghu_, ghs_, ghr_)", canary("ghs_", strings.Repeat("Zz09", 9)), redacted},
		{"GitHub fine-grained token (github_pat_)", canary("github_pat_", "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"), redacted},
		{"GitLab token (glpat-)", canary("glpat-", "xxxxXXXX1234567890ab"), redacted},
		{"Slack token (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xoxe-)", canary("xoxb-", "1234567890-0987654321-AbCdEfGhIjKl"), redacted},
		{"Slack token (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xoxe-)", canary("xoxp-", "1234567890-abcdef"), redacted},
		{"Slack webhook URL", canary("https://hooks.slack", ".com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX"), redacted},
		{"Google API key (AIza)", canary("AIza", "SyA-1234567890abcdefghijklmnopqrstu"), redacted},
		{"Stripe key (sk_live_, rk_live_, sk_test_)", canary("sk_", "live_", "4eC39HqLyjWDarjtT1zdp7dc"), redacted},
		{"OpenAI or Anthropic key (sk-, sk-proj-, sk-ant-)", canary("sk-", "proj-", "abcdefghijklmnopqrstuvwxyz012345"), redacted},
		{"OpenAI or Anthropic key (sk-, sk-proj-, sk-ant-)", canary("sk-", "ant-", "api03-abcdefghijklmnopqrstuvwxyz"), redacted},
		{"npm token (npm_)", canary("npm_", strings.Repeat("a1B2", 9)), redacted},
		{"PyPI token (pypi-)", canary("pypi-", "AgEIcHlwaS5vcmc", strings.Repeat("x", 60)), redacted},
		{"JSON Web Token", canary("eyJ", "hbGciOiJIUzI1NiJ9", ".eyJ", "zdWIiOiIxMjM0NTY3ODkwIn0", ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"), redacted},
		{"Authorization value (Bearer …)", canary("Bearer ", "opaque.token-value_123"), "Bearer " + redacted},
		{"Authorization value (Bearer …)", canary("bearer\t", "abcdefgh12345678"), "bearer\t" + redacted},
		{"PEM private key block", pem, redacted},
		{"PEM private key block", canary("-----BEGIN PRIVATE", " KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC"), redacted},
	} {
		t.Run(tc.format, func(t *testing.T) {
			known := false
			for _, f := range SecretFormats {
				if f.Name == tc.format {
					known = true
					if !f.re.MatchString(tc.secret) {
						t.Errorf("%s does not match its canary %q", f.Name, tc.secret)
					}
				}
			}
			if !known {
				t.Fatalf("no format named %q", tc.format)
			}
			// A key block cut short has no END line: it is redacted to
			// where the key text stops, so it is tested at the end.
			end := " (end)"
			if !strings.Contains(tc.secret, "-----END") && strings.Contains(tc.secret, "-----BEGIN") {
				end = ""
			}
			text := "the server said:\n" + tc.secret + end
			if got, want := RedactSecretFormats(text), "the server said:\n"+tc.want+end; got != want {
				t.Errorf("plain text:\n got %q\nwant %q", got, want)
			}
			rec, err := json.Marshal(map[string]string{"text": text, "after": "kept"})
			if err != nil {
				t.Fatal(err)
			}
			clean := RedactSecretFormats(string(rec))
			var back map[string]string
			if err := json.Unmarshal([]byte(clean), &back); err != nil {
				t.Fatalf("redacted JSON is not JSON: %v\n%s", err, clean)
			}
			if back["text"] != "the server said:\n"+tc.want+end || back["after"] != "kept" {
				t.Errorf("in JSON: %q", back)
			}
		})
	}
	for _, benign := range []string{
		"a plain sentence with nothing secret, thought and high",
		"AKIA is a prefix; AKIAshort is not a key",
		"ghp_tooshort and github_pat_short",
		"the bearer of bad news",
		"sk-learn is a library",
		"eyJ alone is not a token",
		"task-management-system-overview-document",
		"myAKIAIOSFODNN7EXAMPLE is inside a word",
		"-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----",
	} {
		if got := RedactSecretFormats(benign); got != benign {
			t.Errorf("RedactSecretFormats(%q) = %q, want it unchanged", benign, got)
		}
	}
}

// TestEveryFormatHasAHint: the cheap pre-check never skips text a
// format would match, and a word that only contains a prefix is no key.
func TestEveryFormatHasAHint(t *testing.T) {
	for _, s := range []string{
		canary("AKIA", "IOSFODNN7EXAMPLE"), canary("A3TX", "IOSFODNN7EXAMPLE"), canary("gho_", strings.Repeat("a", 36)),
		canary("xoxe-", "1234567890"), canary("rk_", "test_", "0123456789abcdef"), canary("BEARER ", "abcdefgh1234"),
	} {
		if RedactSecretFormats(s) == s {
			t.Errorf("%q is not redacted", s)
		}
	}
}
