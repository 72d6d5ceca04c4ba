package mcpclient

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
)

func TestSecretsRedact(t *testing.T) {
	shared := &Secrets{}
	s := &Secrets{also: shared}
	s.Add("abc", "tok-123", "tok-123456", "")
	h := http.Header{}
	h.Set("Authorization", "Bearer oauth-access-token-xyz")
	h.Set("Accept", "application/json")
	s.addFromHeader(h)

	for in, want := range map[string]string{
		"short abc stays":                      "short abc stays",
		"longest first: tok-123456":            "longest first: [REDACTED]",
		"tok-123 alone":                        "[REDACTED] alone",
		"oauth-access-token-xyz echoed":        "[REDACTED] echoed",
		"header Bearer oauth-access-token-xyz": "header [REDACTED]",
		"application/json is no secret":        "application/json is no secret",
	} {
		if got := s.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
		if got := shared.Redact(in); got != want {
			t.Errorf("the shared set: Redact(%q) = %q, want %q", in, got, want)
		}
	}

	err := fmt.Errorf("calling tool: %w: server said tok-123456", io.ErrUnexpectedEOF)
	red := s.redactError(err)
	if red.Error() != "calling tool: unexpected EOF: server said [REDACTED]" || !errors.Is(red, io.ErrUnexpectedEOF) {
		t.Errorf("redactError = %q (Is EOF: %v)", red, errors.Is(red, io.ErrUnexpectedEOF))
	}
	if clean := errors.New("nothing secret"); s.redactError(clean) != clean {
		t.Error("an error without secrets was wrapped")
	}
}
