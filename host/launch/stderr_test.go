package launch

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
)

func jsonLogger(w io.Writer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "server.files", Output: w, JSONFormat: true, Level: hclog.Trace})
}

// stderrLines returns the "line" values of the info-level "stderr" entries
// in JSON log output.
func stderrLines(t *testing.T, logs string) []string {
	t.Helper()
	var lines []string
	for _, raw := range strings.Split(strings.TrimSpace(logs), "\n") {
		if raw == "" {
			continue
		}
		var entry struct {
			Level   string `json:"@level"`
			Message string `json:"@message"`
			Module  string `json:"@module"`
			Line    string `json:"line"`
		}
		if err := json.Unmarshal([]byte(raw), &entry); err != nil {
			t.Fatalf("log line %q: %v", raw, err)
		}
		if entry.Message != "stderr" {
			continue
		}
		if entry.Level != "info" || entry.Module != "server.files" {
			t.Errorf("stderr entry logged at %s under %q, want info under the server's logger", entry.Level, entry.Module)
		}
		lines = append(lines, entry.Line)
	}
	return lines
}

func TestPumpStderr(t *testing.T) {
	t.Parallel()
	// 8191 ASCII bytes then a 2-byte rune: the rune straddles the cap and
	// must move whole to the next line.
	straddling := strings.Repeat("a", MaxStderrLine-1) + "é" + "tail"
	tests := []struct {
		name  string
		input string
		want  []string
	}{
		{name: "lines", input: "one\ntwo\n", want: []string{"one", "two"}},
		{name: "crlf and blank lines", input: "one\r\n\r\n\ntwo\r\n", want: []string{"one", "two"}},
		{name: "last line without newline", input: "one\ntwo", want: []string{"one", "two"}},
		{name: "empty", input: "", want: nil},
		{
			name:  "long line split at the cap",
			input: strings.Repeat("x", 2*MaxStderrLine+5) + "\nnext\n",
			want:  []string{strings.Repeat("x", MaxStderrLine), strings.Repeat("x", MaxStderrLine), "xxxxx", "next"},
		},
		{
			name:  "line of exactly the cap",
			input: strings.Repeat("y", MaxStderrLine) + "\nnext\n",
			want:  []string{strings.Repeat("y", MaxStderrLine), "next"},
		},
		{
			name:  "split keeps runes whole",
			input: straddling + "\n",
			want:  []string{strings.Repeat("a", MaxStderrLine-1), "étail"},
		},
		{name: "invalid UTF-8 is escaped", input: "bad \xff\xfe end\n\xc3\n", want: []string{`bad \xff\xfe end`, `\xc3`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs strings.Builder
			// One byte per Read exercises the scanner's buffering paths.
			PumpStderr(iotest.OneByteReader(strings.NewReader(tt.input)), jsonLogger(&logs))
			if diff := cmp.Diff(tt.want, stderrLines(t, logs.String())); diff != "" {
				t.Fatalf("logged lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPumpStderrReturnsOnReadError(t *testing.T) {
	t.Parallel()
	var logs strings.Builder
	r := io.MultiReader(strings.NewReader("partial\nline"), iotest.ErrReader(io.ErrClosedPipe))
	PumpStderr(r, jsonLogger(&logs))
	// What was read before the error is still logged.
	if diff := cmp.Diff([]string{"partial", "line"}, stderrLines(t, logs.String())); diff != "" {
		t.Fatalf("logged lines (-want +got):\n%s", diff)
	}
}

func TestPumpStderrWithoutLoggerDrains(t *testing.T) {
	t.Parallel()
	r := strings.NewReader(strings.Repeat("noise\n", 1000))
	PumpStderr(r, nil)
	if r.Len() != 0 {
		t.Fatalf("%d bytes left unread", r.Len())
	}
}

func BenchmarkPumpStderr(b *testing.B) {
	input := strings.Repeat("2026-01-01T00:00:00Z INFO server: handled request id=42 duration=3ms\n", 1000)
	b.SetBytes(int64(len(input)))
	log := hclog.New(&hclog.LoggerOptions{Output: io.Discard, Level: hclog.Info})
	for b.Loop() {
		PumpStderr(strings.NewReader(input), log)
	}
}

// TestStderrFloodIsRateLimited: a process writing stderr without pause
// gets a burst of lines logged, then a steady rate; what is left out is
// counted in one warning each time logging resumes and at the end.
func TestStderrFloodIsRateLimited(t *testing.T) {
	t.Parallel()
	var input strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&input, "flood %d\n", i)
	}
	var out strings.Builder
	clock := time.Unix(0, 0)
	tick := 0
	now := func() time.Time {
		// 1000 lines in 1 s: far above the steady rate.
		tick++
		return clock.Add(time.Duration(tick) * time.Millisecond)
	}
	pumpStderr(strings.NewReader(input.String()), jsonLogger(&out), nil, now)
	lines := stderrLines(t, out.String())
	// The burst, plus what 1 s of refill allows.
	if want := StderrBurst + StderrLinesPerSec; len(lines) < StderrBurst || len(lines) > want {
		t.Errorf("logged %d of 1000 flood lines, want between %d and %d", len(lines), StderrBurst, want)
	}
	suppressed := 0
	for _, raw := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var entry struct {
			Level      string `json:"@level"`
			Suppressed int    `json:"suppressed"`
		}
		if err := json.Unmarshal([]byte(raw), &entry); err == nil && entry.Suppressed > 0 {
			if entry.Level != "warn" {
				t.Errorf("suppression summary at %s, want warn", entry.Level)
			}
			suppressed += entry.Suppressed
		}
	}
	if len(lines)+suppressed != 1000 {
		t.Errorf("logged %d and counted %d suppressed, want 1000 in all", len(lines), suppressed)
	}

	// A quiet process is never limited.
	out.Reset()
	pumpStderr(strings.NewReader("one\ntwo\n"), jsonLogger(&out), nil, time.Now)
	if got := stderrLines(t, out.String()); len(got) != 2 {
		t.Errorf("quiet stderr logged %v", got)
	}
}
