package executor

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestScanForMarker finds the readiness line however the executor's
// stderr arrives, keeps what came before it (bounded, ending with the
// newest output), and loses nothing of what came after it.
func TestScanForMarker(t *testing.T) {
	const marker = readyMarkerPrefix + "abc"
	noise := strings.Repeat("warning: something\n", 10_000) // ~190 KiB
	tests := []struct {
		name       string
		input      string
		oneByte    bool
		found      bool
		before     string // suffix of before
		after      string
		beforeHead string // prefix of before
	}{
		{name: "marker first", input: marker + "\nserver log\n", found: true, after: "server log\n"},
		{name: "executor noise first", input: "Warning: Permanently added '[127.0.0.1]:2222'\n" + marker + "\n", found: true, before: "added '[127.0.0.1]:2222'\n"},
		{name: "one byte at a time", input: "a\n" + marker + "\nb", oneByte: true, found: true, before: "a\n", after: "b"},
		{name: "no marker", input: "Permission denied (publickey).\n", before: "Permission denied (publickey).\n"},
		{name: "marker prefix is not the marker", input: readyMarkerPrefix + "ab\n", before: readyMarkerPrefix + "ab\n"},
		{name: "a flood before the marker", input: noise + "last words\n" + marker + "\n", found: true,
			before: "last words\n", beforeHead: "[launcher-exec dropped the first "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r io.Reader = strings.NewReader(tt.input)
			if tt.oneByte {
				r = iotest.OneByteReader(r)
			}
			s := scanForMarker(r, marker)
			// What the scan did not read stays in r for the server's stderr.
			rest, _ := io.ReadAll(r)
			after := string(s.after) + string(rest)
			before := string(s.before)
			if s.found != tt.found || !strings.HasSuffix(before, tt.before) || !strings.HasPrefix(before, tt.beforeHead) ||
				after != tt.after || len(before) > maxEarlyStderr+100 {
				t.Errorf("scan = found %v, before %d bytes ending %q, after %q", s.found, len(before), tail(before), after)
			}
		})
	}
}

func tail(s string) string {
	if len(s) > 60 {
		return s[len(s)-60:]
	}
	return s
}
