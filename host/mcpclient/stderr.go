package mcpclient

import (
	"io"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/host/launch"

	"github.com/toolgate/toolgate/internal/safetext"
)

// What a startup error quotes of the server's stderr: enough to show a
// stack trace's head or a "command not found", not a whole log.
const (
	stderrTailLines = 10
	stderrTailBytes = 2048
)

// pumpStderr logs every stderr line under log, with the server's own
// secrets and well-known credential formats redacted and terminal escapes
// shown rather than acted on, and keeps the tail (treated the same when
// it is quoted: see stderrReport).
func pumpStderr(r io.Reader, tail *tailBuffer, log hclog.Logger, secrets []string) {
	launch.PumpStderrRedacted(io.TeeReader(r, tail), log, func(s string) string {
		return safetext.Line(RedactSecretFormats(redactValues(s, secrets)))
	})
}

// stderrReport is the tail of a server's stderr as errors quote it:
// its secrets redacted, escapes visible.
func stderrReport(tail *tailBuffer, secrets []string) string {
	return safetext.Block(RedactSecretFormats(redactValues(tail.String(), secrets)))
}

// tailBuffer keeps the last bytes written to it.
type tailBuffer struct {
	maxLines, maxBytes int

	mu  sync.Mutex
	buf []byte
}

func newTailBuffer(lines, bytes int) *tailBuffer {
	return &tailBuffer{maxLines: lines, maxBytes: bytes}
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - 4*t.maxBytes; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String returns at most maxLines lines and maxBytes bytes, the newest.
func (t *tailBuffer) String() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	s := string(t.buf)
	t.mu.Unlock()
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > t.maxLines {
		lines = lines[len(lines)-t.maxLines:]
	}
	out := strings.Join(lines, "\n")
	if len(out) > t.maxBytes {
		out = "…" + out[len(out)-t.maxBytes:]
	}
	return strings.TrimSpace(out)
}
