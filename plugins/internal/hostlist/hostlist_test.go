package hostlist_test

import (
	"testing"

	"github.com/toolgate/toolgate/plugins/internal/hostlist"
)

func TestContains(t *testing.T) {
	l, err := hostlist.Parse([]string{"example.com", "*.github.com", "10.0.0.1", "[::1]", "Localhost."})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		value string
		want  bool
	}{
		{"https://example.com/a", true},
		{"https://EXAMPLE.com.:8443/a", true},
		{"https://evil-example.com/", false},
		{"https://example.com.evil.org/", false},
		{"https://api.github.com/repos", true},
		{"https://github.com/", false},
		{"http://10.0.0.1:8080/", true},
		{"http://[::1]:9/", true},
		{"localhost:3000", true},
		{"example.com/path", true},
		{"https://user:pw@example.com/", true},
		{"https://example.com@evil.org/", false},
	} {
		t.Run(tt.value, func(t *testing.T) {
			host, ok := hostlist.HostOf(tt.value)
			if !ok {
				t.Fatalf("HostOf(%q) found no host", tt.value)
			}
			if got := l.Contains(host); got != tt.want {
				t.Errorf("Contains(%q) = %v, want %v", host, got, tt.want)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	for _, entry := range []string{"", "https://example.com", "example.com/path", "example.com:443", "*"} {
		if _, err := hostlist.Parse([]string{entry}); err == nil {
			t.Errorf("Parse(%q) accepted a bad entry", entry)
		}
	}
}

func TestURLHost(t *testing.T) {
	for _, tt := range []struct {
		value, host string
		ok          bool
	}{
		{"https://api.example.com/x", "api.example.com", true},
		{"see https://x.org", "", false},
		{"plain words", "", false},
		{"file:///etc/passwd", "", false},
		{"ssh://git@host.example:22/repo", "host.example", true},
	} {
		host, ok := hostlist.URLHost(tt.value)
		if host != tt.host || ok != tt.ok {
			t.Errorf("URLHost(%q) = %q, %v; want %q, %v", tt.value, host, ok, tt.host, tt.ok)
		}
	}
}
