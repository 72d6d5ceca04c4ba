package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/contain"
)

// maxOutput bounds what is kept of the program's stdout and stderr; more
// stdout than this fails the hook (a decision is a few hundred bytes).
const maxOutput = 1 << 20

// waitDelay bounds how long Wait keeps reading the program's pipes after
// the program exited, in case a process its cell does not hold (macOS: one
// that left the process group) keeps them open.
const waitDelay = 2 * time.Second

// ErrTimeout means the program did not finish within the configured timeout
// and was killed. It wraps context.DeadlineExceeded, so the host reports the
// hook as timed out; on_error decides what that means for the call.
var ErrTimeout = fmt.Errorf("hook command timed out: %w", context.DeadlineExceeded)

// result is how one run of the program ended.
type result struct {
	exitCode int
	stdout   []byte
	stderr   []byte
}

// run executes the program once with stdin, in dir when it exists. It
// runs in a containment cell of its own (internal/contain, as every child
// of toolgate does): its process group and, on Linux, a cgroup or the
// subreaper's walk (Windows: a Job Object), so that the timeout kills
// everything the program started, and what it leaves running when it
// exits is killed with it (KillRest: a hook's helpers have no business
// outliving its answer, and probing for them would cost more than the
// program). The plugin's main does not call contain.RunSupervisorIfAsked:
// a supervisor would start and stop with every call (about 10 ms each),
// and on Linux the host's cell of the plugin already holds these cells.
func (s *settings) run(ctx context.Context, stdin []byte, dir string) (result, error) {
	runCtx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	cmd.Env = s.env
	if dir != "" {
		if info, err := os.Stat(dir); err == nil && info.IsDir() {
			cmd.Dir = dir
		}
	}
	cmd.Stdin = bytes.NewReader(stdin)
	stdout := &cappedBuffer{limit: maxOutput}
	stderr := &cappedBuffer{limit: maxOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = waitDelay

	// A weaker cell (no cgroup) still holds the process group, so its
	// error is not fatal.
	cell, _ := contain.Default().NewCell("hook-command")
	proc, err := cell.Start(cmd, contain.StartOptions{KillRest: true})
	if err != nil {
		return result{}, fmt.Errorf("run hook command %s: %w", s.argv[0], err)
	}
	select {
	case <-proc.Done():
	case <-runCtx.Done():
		_ = proc.Kill()
		<-proc.Done()
	}
	err = proc.Err()
	switch {
	case ctx.Err() != nil:
		return result{}, fmt.Errorf("run hook command: %w", ctx.Err())
	case runCtx.Err() != nil:
		return result{}, fmt.Errorf("%w after %s; make the program faster or raise timeout in the plugin's config block", ErrTimeout, s.timeout)
	}
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr) && exitErr.Exited():
	case err != nil && exitErr != nil:
		return result{}, fmt.Errorf("run hook command: %s ended by %v%s", s.argv[0], exitErr.ProcessState, s.excerpt(stderr.Bytes()))
	case err != nil:
		return result{}, fmt.Errorf("run hook command %s: %w", s.argv[0], err)
	}
	if stdout.overflow {
		return result{}, fmt.Errorf("run hook command: %s printed more than %d bytes on stdout; a decision is one small JSON object", s.argv[0], maxOutput)
	}
	return result{exitCode: cmd.ProcessState.ExitCode(), stdout: stdout.Bytes(), stderr: stderr.Bytes()}, nil
}

// excerpt quotes the start of stderr for an error text, with the configured
// env values redacted.
func (s *settings) excerpt(stderr []byte) string {
	text := strings.TrimSpace(string(stderr))
	if text == "" {
		return ""
	}
	const limit = 300
	if len(text) > limit {
		text = text[:limit] + "…"
	}
	return ": " + s.redact(text)
}

// redact replaces every configured env value in text.
func (s *settings) redact(text string) string {
	for _, secret := range s.secrets {
		text = strings.ReplaceAll(text, secret, "[redacted]")
	}
	return text
}

// cappedBuffer keeps the first limit bytes written and drops the rest, so a
// runaway program cannot exhaust the plugin's memory. It does not embed
// bytes.Buffer on purpose: io.Copy would use the buffer's ReadFrom and
// bypass the limit.
type cappedBuffer struct {
	buf      bytes.Buffer
	limit    int
	overflow bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	room := b.limit - b.buf.Len()
	if len(p) > room {
		b.overflow = true
		if room > 0 {
			b.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return b.buf.Write(p)
}

// Bytes returns what was kept.
func (b *cappedBuffer) Bytes() []byte { return b.buf.Bytes() }
