package tokenauth_test

import (
	"crypto/sha256"
	"crypto/subtle"
	"testing"

	"github.com/toolgate/toolgate/host/tokenauth"
	"github.com/toolgate/toolgate/host/tokenauth/tokenauthtest"
)

// BenchmarkValidate is what checking one request's token costs once it
// was accepted (every request of a session after the first carries the
// same token): an RS256 access token against the baseline, serve's
// static token (a SHA-256 and a constant-time compare). Compare the two
// lines' ns/op as a ratio.
func BenchmarkValidate(b *testing.B) {
	iss := tokenauthtest.New(b)
	v := tokenauth.New(authFor(iss), tokenauth.Options{})
	tok := iss.Token(b, "k1", tokenauthtest.Claims{Subject: "alice", Audience: []string{resource},
		Extra: map[string]any{"groups": []string{"admins"}, "email": "alice@example.com"}})
	if _, err := v.Validate(b.Context(), tok); err != nil {
		b.Fatal(err)
	}
	b.Run("baseline=static-token", func(b *testing.B) {
		want := sha256.Sum256([]byte("a-long-random-static-token-0123456789abcdef"))
		for b.Loop() {
			sum := sha256.Sum256([]byte("a-long-random-static-token-0123456789abcdef"))
			if subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
				b.Fatal("mismatch")
			}
		}
	})
	b.Run("jwt-rs256", func(b *testing.B) {
		for b.Loop() {
			if _, err := v.Validate(b.Context(), tok); err != nil {
				b.Fatal(err)
			}
		}
	})
}
