package executor_test

import (
	"context"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/sdk/launcher"
)

// startBound is how long a failing start may take at most; every case
// below fails in milliseconds, and a hang would show as this deadline.
const startBound = 20 * time.Second

// TestStartErrorsSayWhatToFix launches through executors that cannot run
// the command and checks that the user gets a start error of the right
// kind, a message that names the fix, and the executor's own words.
func TestStartErrorsSayWhatToFix(t *testing.T) {
	scripts := t.TempDir()
	refused := writeScript(t, scripts, "refused",
		"echo 'ssh: connect to host build-1 port 22: Connection refused' >&2\nexit 255\n")
	tests := []struct {
		name    string
		cfg     map[string]any
		spec    launcher.Spec
		kind    launcher.ErrorKind
		message []string // substrings of the message
		stderr  string   // substring of the stderr excerpt
	}{{
		name:    "local command missing",
		cfg:     map[string]any{"executor": "local"},
		spec:    launcher.Spec{Command: "toolgate-no-such-server"},
		kind:    launcher.KindNotFound,
		message: []string{`"toolgate-no-such-server" not found in PATH on this machine`, "absolute path"},
	}, {
		name:    "local sandbox program missing",
		cfg:     map[string]any{"executor": "local", "sandbox_prefix": []string{"toolgate-no-such-sandbox"}},
		spec:    launcher.Spec{Command: "true"},
		kind:    launcher.KindNotFound,
		message: []string{`"toolgate-no-such-sandbox" not found`, "sandbox_prefix"},
	}, {
		name:    "remote command missing",
		cfg:     map[string]any{"executor": "custom", "prefix": []string{"sh", "-c", "{{script}}"}},
		spec:    launcher.Spec{Command: "toolgate-no-such-server", Env: map[string]string{"A": "1"}},
		kind:    launcher.KindNotFound,
		message: []string{`command "toolgate-no-such-server" not found through the custom prefix "sh"`, "install it there"},
	}, {
		name:    "remote absolute command missing",
		cfg:     map[string]any{"executor": "custom", "prefix": []string{"sh", "-c", "{{script}}"}},
		spec:    launcher.Spec{Command: "/nonexistent/server"},
		kind:    launcher.KindNotFound,
		message: []string{`command "/nonexistent/server" not found`},
	}, {
		name:    "remote working directory missing",
		cfg:     map[string]any{"executor": "custom", "prefix": []string{"sh", "-c", "{{script}}"}},
		spec:    launcher.Spec{Command: "true", Dir: "/nonexistent/dir"},
		kind:    launcher.KindNotFound,
		message: []string{`working directory "/nonexistent/dir" does not exist`, "cwd"},
		stderr:  "/nonexistent/dir",
	}, {
		name:    "executor gives up before the command runs",
		cfg:     map[string]any{"executor": "custom", "prefix": []string{refused, "{{script}}"}},
		spec:    launcher.Spec{Command: "true"},
		kind:    launcher.KindExecutor,
		message: []string{"exit status 255", "before it started the command"},
		stderr:  "Connection refused",
	}, {
		name:    "executor program missing",
		cfg:     map[string]any{"executor": "custom", "prefix": []string{"toolgate-no-such-executor"}, "runs_locally": true},
		spec:    launcher.Spec{Command: "true"},
		kind:    launcher.KindNotFound,
		message: []string{`"toolgate-no-such-executor" not found`, "prefix[0]"},
	}, {
		name:    "env the template cannot carry",
		cfg:     map[string]any{"executor": "custom", "prefix": []string{"nice"}},
		spec:    launcher.Spec{Server: "files", Command: "true", Env: map[string]string{"TOKEN": "s3cret-value"}},
		kind:    launcher.KindOther,
		message: []string{`server "files" sets environment variables (TOKEN)`, "{{env}}", "runs_locally"},
	}, {
		name:    "cwd the template cannot carry",
		cfg:     map[string]any{"executor": "custom", "prefix": []string{"nice", "{{env}}"}},
		spec:    launcher.Spec{Command: "true", Dir: "/srv"},
		kind:    launcher.KindOther,
		message: []string{`a working directory ("/srv")`, "{{dir}}"},
	}, {
		name:    "env name a shell cannot export",
		cfg:     map[string]any{"executor": "custom", "prefix": []string{"sh", "-c", "{{script}}"}},
		spec:    launcher.Spec{Command: "true", Env: map[string]string{"NOT-AN-IDENTIFIER": "value-not-for-errors"}},
		kind:    launcher.KindOther,
		message: []string{`"NOT-AN-IDENTIFIER" cannot be set`, "POSIX shell"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := inProcess(t, tt.cfg)
			ctx, cancel := context.WithTimeout(t.Context(), startBound)
			defer cancel()
			p, err := c.Launch(ctx, tt.spec)
			if err == nil {
				_ = p.Close()
				t.Fatal("Launch succeeded, want a start error")
			}
			se := startError(t, err)
			if se.Kind != tt.kind || !containsAll(se.Message, tt.message...) || !strings.Contains(se.StderrExcerpt, tt.stderr) {
				t.Errorf("start error = kind %v, message %q, stderr %q;\nwant kind %v, message with %q, stderr with %q",
					se.Kind, se.Message, se.StderrExcerpt, tt.kind, tt.message, tt.stderr)
			}
			for _, v := range tt.spec.Env {
				if strings.Contains(err.Error(), v) {
					t.Errorf("the start error quotes an env value: %v", err)
				}
			}
		})
	}
}

// TestGarbageBeforeTheServer runs an executor that greets on stdout before
// the server starts (a login banner, a chatty wrapper). The bytes reach
// the host unchanged and the exit is reported at once; an MCP client then
// fails with a protocol error instead of hanging.
func TestGarbageBeforeTheServer(t *testing.T) {
	scripts := t.TempDir()
	t.Run("the bytes and the exit reach the host", func(t *testing.T) {
		banner := writeScript(t, scripts, "banner-then-fail",
			"echo 'Welcome to build-1!'\necho 'wrapper: no server here' >&2\nexit 3\n")
		c := inProcess(t, map[string]any{"executor": "custom", "prefix": []string{banner}, "runs_locally": true})
		ctx, cancel := context.WithTimeout(t.Context(), startBound)
		defer cancel()
		p, err := c.Launch(ctx, launcher.Spec{Command: "mcp-server"})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = p.Close() }()
		stderr := make(chan string, 1)
		go func() { b, _ := io.ReadAll(p.Stderr()); stderr <- string(b) }()
		out, err := io.ReadAll(p)
		if string(out) != "Welcome to build-1!\n" || err != nil {
			t.Errorf("stdout = %q, %v; want the banner, then EOF", out, err)
		}
		var ee *launcher.ExitError
		if err := p.Wait(ctx); !errors.As(err, &ee) || ee.Code != 3 {
			t.Errorf("Wait = %v, want exit status 3", err)
		}
		if got := <-stderr; !strings.Contains(got, "wrapper: no server here") {
			t.Errorf("stderr = %q, want the wrapper's message", got)
		}
	})
	t.Run("an MCP client gets a protocol error, not a hang", func(t *testing.T) {
		banner := writeScript(t, scripts, "banner-then-server", "echo 'Welcome to build-1!'\nexec \"$@\"\n")
		c := inProcess(t, map[string]any{"executor": "custom", "prefix": []string{banner}, "runs_locally": true})
		ctx, cancel := context.WithTimeout(t.Context(), startBound)
		defer cancel()
		p, err := c.Launch(ctx, launcher.Spec{Command: demo(t), Env: baseEnv(nil)})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = p.Close() }()
		go func() { _, _ = io.Copy(io.Discard, p.Stderr()) }()
		client := mcp.NewClient(&mcp.Implementation{Name: "launcher-exec-test", Version: "0"}, nil)
		cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: p, Writer: p}, nil)
		if err == nil {
			_ = cs.Close()
			t.Fatal("Connect succeeded over a stream that starts with a banner")
		}
		if ctx.Err() != nil || !strings.Contains(err.Error(), "invalid character 'W'") {
			t.Errorf("Connect = %v; want a JSON error about the banner, before the deadline", err)
		}
	})
}

// TestServerThatDiesAtStartIsReportedPromptly: a server that exits before
// the MCP handshake is seen as an exit status and its stderr, at once.
func TestServerThatDiesAtStartIsReportedPromptly(t *testing.T) {
	for _, cfg := range []map[string]any{
		{"executor": "local"},
		{"executor": "custom", "prefix": []string{"sh", "-c", "{{script}}"}},
	} {
		t.Run(cfg["executor"].(string), func(t *testing.T) {
			c := inProcess(t, cfg)
			ctx, cancel := context.WithTimeout(t.Context(), startBound)
			defer cancel()
			p, err := c.Launch(ctx, launcher.Spec{Command: demo(t), Args: []string{"--exit-immediately", "7"}, Env: baseEnv(nil)})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = p.Close() }()
			stderr := make(chan string, 1)
			go func() { b, _ := io.ReadAll(p.Stderr()); stderr <- string(b) }()
			client := mcp.NewClient(&mcp.Implementation{Name: "launcher-exec-test", Version: "0"}, nil)
			if cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: p, Writer: p}, nil); err == nil {
				_ = cs.Close()
				t.Fatal("Connect to a server that exited succeeded")
			}
			var ee *launcher.ExitError
			if err := p.Wait(ctx); !errors.As(err, &ee) || ee.Code != 7 {
				t.Errorf("Wait = %v, want exit status 7", err)
			}
			if got := <-stderr; !strings.Contains(got, "fatal: demo startup failure") {
				t.Errorf("stderr = %q, want the server's message", got)
			}
		})
	}
}

// TestCloseEndsTheServerAndItsProcessGroup: the host's Close (stdin EOF,
// then signals) leaves nothing of a local server behind, including a child
// it started in its process group.
func TestCloseEndsTheServerAndItsProcessGroup(t *testing.T) {
	c := inProcess(t, map[string]any{"executor": "local"})
	ctx, cancel := context.WithTimeout(t.Context(), startBound)
	defer cancel()
	p, err := c.Launch(ctx, launcher.Spec{Command: demo(t), Args: []string{"--spawn-child"}, Env: baseEnv(nil)})
	if err != nil {
		t.Fatal(err)
	}
	line, err := procwatch.WaitLine(ctx, p.Stderr(), regexp.MustCompile(`child pid (\d+)`))
	if err != nil {
		_ = p.Close()
		t.Fatal(err)
	}
	child, _ := strconv.Atoi(line)
	if err := p.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	for _, pid := range []int{p.Pid(), child} {
		if err := procwatch.WaitGone(ctx, pid); err != nil {
			t.Errorf("process %d still running after Close: %v", pid, err)
		}
	}
}
