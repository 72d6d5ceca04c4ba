package cli_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/pty"
	"github.com/toolgate/toolgate/internal/testbin"
)

// session runs bin/toolgate on a real pseudo-terminal, as a person would.
type session struct {
	t      *testing.T
	cmd    *exec.Cmd
	master *os.File
	lines  chan string
	seen   []string
}

func startOnTTY(t *testing.T, args ...string) *session {
	t.Helper()
	master, slave, err := pty.Open()
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("SKIPPED ON %s: %v (the terminal tests run on Linux)", runtime.GOOS, err)
	}
	if err != nil {
		t.Fatalf("opening a pty: %v", err)
	}
	cmd := procwatch.DieWithTest(exec.Command(testbin.Path(t, "toolgate"), args...))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.Env = append(os.Environ(), "TOOLGATE_LOG=off")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close() // the child holds it now; EOF on master once it exits
	s := &session{t: t, cmd: cmd, master: master, lines: make(chan string, 256)}
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(master)
		for sc.Scan() {
			s.lines <- ansi.ReplaceAllString(strings.TrimRight(sc.Text(), "\r"), "")
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		master.Close()
		for range s.lines {
		}
	})
	return s
}

// ansi matches terminal color sequences: the prompt is colored on a TTY.
var ansi = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// expect waits for a line matching re.
func (s *session) expect(re string) {
	s.t.Helper()
	r := regexp.MustCompile(re)
	ctx, cancel := context.WithTimeout(s.t.Context(), 30*time.Second)
	defer cancel()
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				s.t.Fatalf("output ended before %q; saw:\n%s", re, strings.Join(s.seen, "\n"))
			}
			s.seen = append(s.seen, l)
			if r.MatchString(l) {
				return
			}
		case <-ctx.Done():
			s.t.Fatalf("no line matched %q; saw:\n%s", re, strings.Join(s.seen, "\n"))
		}
	}
}

func (s *session) typeLine(text string) {
	s.t.Helper()
	if _, err := s.master.Write([]byte(text + "\r")); err != nil {
		s.t.Fatal(err)
	}
}

func (s *session) exitCode() int {
	s.t.Helper()
	for l := range s.lines {
		s.seen = append(s.seen, l)
	}
	err := s.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		s.t.Fatal(err)
	}
	return 0
}

func TestCallAsksOnARealTerminal(t *testing.T) {
	dir := exampleDir(t)
	cfg := filepath.Join(dir, "config.hcl.example")
	call := []string{"call", "--config", cfg, "mcp__files__slow_write", `{"ms":1}`}

	// Decline: the prompt is readable and the call is rejected.
	s := startOnTTY(t, call...)
	s.expect(`toolgate: approve MCP tool call\?`)
	s.expect(`server:\s+files`)
	s.expect(`tool:\s+slow_write`)
	s.expect(`"ms": 1`)
	s.expect(`Allow the files MCP server to run tool "slow_write"\?`)
	s.expect(`\[a\] Allow and don't ask me again`)
	s.expect(`\[c\] Cancel`)
	s.typeLine("n")
	s.expect(`user rejected MCP tool call`)
	if code := s.exitCode(); code != 1 {
		t.Fatalf("declined call exited %d, want 1", code)
	}

	// Cancel.
	s = startOnTTY(t, call...)
	s.expect(`\[c\] Cancel`)
	s.typeLine("c")
	s.expect(`user cancelled MCP tool call`)
	if code := s.exitCode(); code != 1 {
		t.Fatalf("cancelled call exited %d", code)
	}

	// Allow and don't ask me again: runs, and is written to the file.
	s = startOnTTY(t, call...)
	s.expect(`\[c\] Cancel`)
	s.typeLine("a")
	s.expect(`\\"start\\"`)
	if code := s.exitCode(); code != 0 {
		t.Fatalf("allowed call exited %d:\n%s", code, strings.Join(s.seen, "\n"))
	}
	src, _ := os.ReadFile(cfg)
	if !strings.Contains(string(src), "# toolgate example configuration") ||
		!regexp.MustCompile(`tool "slow_write" \{\s+approval_mode = "remembered"\s+approved_definition = "sha256:[0-9a-f]{64}"\s+\}`).Match(src) {
		t.Fatalf("config after \"don't ask again\":\n%s", src)
	}

	// A new process (a restart) runs it without asking.
	s = startOnTTY(t, call...)
	s.expect(`\\"start\\"`)
	if code := s.exitCode(); code != 0 {
		t.Fatalf("remembered call exited %d", code)
	}
	for _, l := range s.seen {
		if strings.Contains(l, "approve MCP tool call") {
			t.Fatal("asked again after a restart")
		}
	}
}

// A server's form elicitation during `toolgate call` is put to the person
// at the terminal field by field; a bad answer is asked again, and what
// they accept is what the server receives.
func TestServerElicitationOnARealTerminal(t *testing.T) {
	cfg := filepath.Join(exampleDir(t), "config.hcl.example")
	call := []string{"call", "--config", cfg, "mcp__demo__elicit", `{}`}

	s := startOnTTY(t, call...)
	s.expect(`toolgate: the demo MCP server asks for input`)
	s.expect(`Tell mcp-demo about yourself\.`)
	s.expect(`^age \(whole number; optional\)`)
	s.typeLine("abc")
	s.expect(`not a whole number; try again`)
	s.typeLine("42")
	s.expect(`^color \(choose one`)
	s.expect(`2\) green`)
	s.typeLine("2")
	s.expect(`default: anon`)
	s.typeLine("")
	s.expect(`Your answers:`)
	s.expect(`color: green`)
	s.expect(`\[a\]ccept / \[d\]ecline / \[c\]ancel`)
	s.typeLine("a")
	s.expect(`\\"action\\":\\"accept\\",\\"content\\":\{\\"age\\":42,\\"color\\":\\"green\\",\\"name\\":\\"anon\\"\}`)
	if code := s.exitCode(); code != 0 {
		t.Fatalf("accepted elicitation exited %d:\n%s", code, strings.Join(s.seen, "\n"))
	}

	// Declining mid-form sends nothing the person typed.
	s = startOnTTY(t, call...)
	s.expect(`^age \(whole number`)
	s.typeLine("7")
	s.expect(`^color \(choose one`)
	s.typeLine(":decline")
	s.expect(`\\"action\\":\\"decline\\"`)
	if code := s.exitCode(); code != 0 {
		t.Fatalf("declined elicitation exited %d", code)
	}
	for _, l := range s.seen {
		if strings.Contains(l, `\"age\"`) {
			t.Fatalf("a declined form leaked an answer to the server: %s", l)
		}
	}
}
