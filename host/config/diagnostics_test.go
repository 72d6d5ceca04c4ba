package config

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteDiagnostics(t *testing.T) {
	t.Parallel()
	src := `server "github" {
  comand = ["npx"]
}
server "s" {
  command     = "x"
  environment = "nowhere"
}
`
	dir := writeFiles(t, map[string]string{"toolgate.hcl": src})
	path := filepath.Join(dir, "toolgate.hcl")
	cfg, diags := Load(path, LoadOptions{LookupEnv: fakeEnv(nil)})
	if len(diags) != 1 {
		t.Fatalf("want the one schema error (cross checks wait for a clean load), got:%s", describe(diags))
	}

	// Warnings come with a usable config, rendered the same way.
	warnSrc := `server "s" {
  command     = "x"
  environment = "nowhere"
}
`
	warnDir := writeFiles(t, map[string]string{"toolgate.hcl": warnSrc})
	warnCfg, warnDiags := Load(filepath.Join(warnDir, "toolgate.hcl"), LoadOptions{LookupEnv: fakeEnv(nil)})
	if warnDiags.HasErrors() || len(warnDiags) != 1 {
		t.Fatalf("want one warning, got:%s", describe(warnDiags))
	}

	for _, tc := range []struct {
		name  string
		write func(*bytes.Buffer) error
		want  []string
	}{
		{
			name:  "error with files from Load",
			write: func(b *bytes.Buffer) error { return WriteDiagnostics(b, diags, cfg.Files, 0, false) },
			want: []string{
				"Error: Unsupported argument",
				"on " + path + ` line 2, in server "github":`,
				`   2:   comand = ["npx"]`,
				`An argument named "comand" is not expected here. Did you mean "command"?`,
			},
		},
		{
			name:  "nil files are read from disk",
			write: func(b *bytes.Buffer) error { return WriteDiagnostics(b, diags, nil, 0, false) },
			want:  []string{`   2:   comand = ["npx"]`},
		},
		{
			name:  "warning",
			write: func(b *bytes.Buffer) error { return WriteDiagnostics(b, warnDiags, warnCfg.Files, 0, false) },
			want:  []string{"Warning: Unknown environment", `   3:   environment = "nowhere"`},
		},
		{
			name:  "color",
			write: func(b *bytes.Buffer) error { return WriteDiagnostics(b, diags, cfg.Files, 0, true) },
			want:  []string{"\x1b["},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			if err := tc.write(&buf); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(buf.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, buf.String())
				}
			}
		})
	}
}

func TestLevenshtein(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"kitten", "sitting", 3},
		{"on_request", "on-request", 1},
		{"never", "never", 0},
		{"grüße", "grusse", 3}, // by rune, not byte: ü→u, ß→s, +s,
	} {
		if got := levenshtein(tc.a, tc.b); got != tc.want {
			t.Errorf("levenshtein(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	t.Parallel()
	policies := []string{"untrusted", "on-request", "never"}
	for _, tc := range []struct {
		got, want string
	}{
		{"on_request", "on-request"},
		{"Never", "never"},
		{"untrustd", "untrusted"},
		{"yes", ""},
		{"", ""},
		{"always", ""},
	} {
		if s := suggest(tc.got, policies); s != tc.want {
			t.Errorf("suggest(%q) = %q, want %q", tc.got, s, tc.want)
		}
	}
	if s := suggest("servers", []string{"serve", "server"}); s != "server" {
		t.Errorf(`suggest("servers") = %q, want the closest, "server"`, s)
	}
}
