package launch

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
)

// MaxStderrLine is the longest stderr line [PumpStderr] logs as one entry;
// longer lines are split so one runaway line cannot hold unbounded memory.
const MaxStderrLine = 8 << 10

// PumpStderr logs every line read from r at info level as
// ("stderr", "line", text) on log, which the caller names after the server,
// and returns when r reaches EOF or fails. Past a burst of [StderrBurst]
// lines, at most [StderrLinesPerSec] lines a second are logged; the rest
// are counted in a "suppressed N stderr lines" warning.
//
// Lines longer than [MaxStderrLine] bytes are split (never inside a UTF-8
// sequence), a trailing "\r" is dropped, empty lines are skipped, and bytes
// that are not valid UTF-8 are written as \xNN so the text stays readable.
// It blocks: run it in a goroutine the caller owns. A nil log still drains r,
// so the child never blocks on a full stderr pipe.
func PumpStderr(r io.Reader, log hclog.Logger) {
	PumpStderrRedacted(r, log, nil)
}

// PumpStderrRedacted is [PumpStderr] with every line passed through
// redact before it is logged (nil: none), for callers that know secrets
// the process might print.
func PumpStderrRedacted(r io.Reader, log hclog.Logger, redact func(string) string) {
	pumpStderr(r, log, redact, time.Now)
}

// Rate limit of the stderr lines logged per process: a burst, then a
// steady rate. A server writing stderr as fast as it can would otherwise
// grow the host's log without bound (156 MB in one short run). Lines over
// the limit are counted and summarized, never logged one by one; callers
// that quote a failing server's last lines keep their own tail, which
// sees every line.
const (
	StderrBurst       = 200
	StderrLinesPerSec = 20
)

func pumpStderr(r io.Reader, log hclog.Logger, redact func(string) string, now func() time.Time) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 0, 4096), MaxStderrLine)
	scanner.Split(splitStderrLines)
	budget := lineBudget{tokens: StderrBurst, last: now()}
	suppressed := 0
	for scanner.Scan() {
		line := scanner.Bytes()
		if len(line) == 0 {
			continue
		}
		if !budget.take(now()) {
			suppressed++
			continue
		}
		if suppressed > 0 {
			logSuppressed(log, suppressed)
			suppressed = 0
		}
		text := readableText(line)
		if redact != nil {
			text = redact(text)
		}
		log.Info("stderr", "line", text)
	}
	if suppressed > 0 {
		logSuppressed(log, suppressed)
	}
	if err := scanner.Err(); err != nil {
		log.Debug("stopped reading stderr", "error", err)
	}
}

func logSuppressed(log hclog.Logger, n int) {
	log.Warn(fmt.Sprintf("suppressed %d stderr lines: the server writes more than %d lines a second (after a burst of %d)",
		n, StderrLinesPerSec, StderrBurst), "suppressed", n)
}

// lineBudget is a token bucket: StderrBurst tokens, refilled at
// StderrLinesPerSec.
type lineBudget struct {
	tokens float64
	last   time.Time
}

func (b *lineBudget) take(now time.Time) bool {
	if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens = min(StderrBurst, b.tokens+elapsed.Seconds()*StderrLinesPerSec)
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// splitStderrLines is a bufio.SplitFunc for lines capped at MaxStderrLine.
// The scanner's buffer never holds more than MaxStderrLine bytes, so when it
// is full without a newline the chunk is emitted as a line of its own.
func splitStderrLines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, bytes.TrimSuffix(data[:i], []byte{'\r'}), nil
	}
	if len(data) >= MaxStderrLine {
		cut := runeBoundary(data[:MaxStderrLine])
		return cut, data[:cut], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), bytes.TrimSuffix(data, []byte{'\r'}), nil
	}
	return 0, nil, nil
}

// runeBoundary returns the length of the longest prefix of b that does not
// end inside a UTF-8 sequence, so a split line keeps its characters whole.
func runeBoundary(b []byte) int {
	for i := len(b) - 1; i > 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}

// readableText returns b as a string with each byte that is not part of a
// valid UTF-8 sequence written as \xNN.
func readableText(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + 8)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			fmt.Fprintf(&sb, `\x%02x`, b[0])
		} else {
			sb.Write(b[:size])
		}
		b = b[size:]
	}
	return sb.String()
}
