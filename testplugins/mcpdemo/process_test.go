package mcpdemo

import (
	"context"
	"errors"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/procwatch"
)

// demoCommand returns an unstarted mcp-demo subprocess whose stderr lines
// the test can wait on.
func demoCommand(t *testing.T, args ...string) (*exec.Cmd, *lines) {
	t.Helper()
	cmd := procwatch.DieWithTest(exec.Command(demoBinary, args...))
	stderr := newLines()
	cmd.Stderr = stderr
	cmd.WaitDelay = testTimeout
	return cmd, stderr
}

// connectProcess starts cmd through go-sdk's CommandTransport. Closing the
// returned session closes stdin and reaps the process, so cmd.ProcessState
// is valid after Close returns.
func connectProcess(t *testing.T, ctx context.Context, cmd *exec.Cmd, version string) (*mcp.ClientSession, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpdemo-test", Version: "1"}, nil)
	return client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: testTimeout}, &mcp.ClientSessionOptions{ProtocolVersion: version})
}

func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	if cmd.ProcessState == nil {
		t.Fatal("process was not reaped")
	}
	return cmd.ProcessState.ExitCode()
}

func TestProcessExitsZeroOnStdinEOF(t *testing.T) {
	for _, v := range bothVersions {
		t.Run(v.name, func(t *testing.T) {
			cmd, _ := demoCommand(t)
			cs, err := connectProcess(t, testCtx(t), cmd, v.version)
			if err != nil {
				t.Fatal(err)
			}
			res, err := cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "over stdio"}})
			if err != nil || onlyText(t, res) != "over stdio" {
				t.Fatalf("echo = %+v, %v", res, err)
			}
			if err := cs.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			if code := exitCode(t, cmd); code != 0 {
				t.Errorf("exit status %d, want 0", code)
			}
		})
	}
}

func TestProcessIgnoreUnknown(t *testing.T) {
	t.Run("client pinned to 2025-11-25 connects at once", func(t *testing.T) {
		cmd, _ := demoCommand(t, "--ignore-unknown")
		cs, err := connectProcess(t, testCtx(t), cmd, legacyVersion)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if got := cs.InitializeResult().ProtocolVersion; got != legacyVersion {
			t.Errorf("negotiated %q", got)
		}
	})
	t.Run("default probe hangs until the deadline", func(t *testing.T) {
		cmd, stderr := demoCommand(t, "--ignore-unknown")
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		defer cancel()
		cs, err := connectProcess(t, ctx, cmd, modernVersion)
		if err == nil {
			cs.Close()
			t.Fatal("default client connected to a server that ignores server/discover")
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("connect error = %v, want a deadline", err)
		}
		stderr.waitContaining(t, `ignoring request "server/discover"`)
		// The failed connect closed stdin and reaped the server, which
		// still exits cleanly.
		if code := exitCode(t, cmd); code != 0 {
			t.Errorf("exit status %d, want 0", code)
		}
	})
}

func TestProcessCrashAfter(t *testing.T) {
	cmd, stderr := demoCommand(t, "--crash-after", "2")
	cs, err := connectProcess(t, testCtx(t), cmd, legacyVersion)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		text := strconv.Itoa(i)
		res, err := cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
		if err != nil || onlyText(t, res) != text {
			t.Fatalf("call %d = %+v, %v", i+1, res, err)
		}
	}
	_ = cs.Wait() // the server hung up
	if _, err := cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "3"}}); err == nil {
		t.Error("third call succeeded after the crash")
	}
	_ = cs.Close()
	if code := exitCode(t, cmd); code != CrashExitCode {
		t.Errorf("exit status %d, want %d; stderr:\n%s", code, CrashExitCode, strings.Join(stderr.all(), "\n"))
	}
}

// startHTTPDemo starts mcp-demo --http on a free port and returns its
// endpoint and an HTTP client whose idle connections are closed at the end.
func startHTTPDemo(t *testing.T, args ...string) (*exec.Cmd, *lines, string, *http.Client) {
	t.Helper()
	cmd, stderr := demoCommand(t, append([]string{"--http", "127.0.0.1:0"}, args...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	line := stderr.waitContaining(t, "listening on http://")
	endpoint := strings.TrimPrefix(line, "listening on ")
	if strings.HasSuffix(endpoint, ":0/mcp") || !strings.HasSuffix(endpoint, "/mcp") {
		t.Fatalf("listening line %q lacks the real port or /mcp", line)
	}
	transport := &http.Transport{}
	t.Cleanup(transport.CloseIdleConnections)
	return cmd, stderr, endpoint, &http.Client{Transport: transport}
}

func connectHTTP(ctx context.Context, endpoint string, hc *http.Client, version string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpdemo-test", Version: "1"}, nil)
	return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
}

func TestProcessStreamableHTTP(t *testing.T) {
	cmd, stderr, endpoint, hc := startHTTPDemo(t, "--name", "http-demo")
	cs, err := connectHTTP(testCtx(t), endpoint, hc, modernVersion)
	if err != nil {
		t.Fatal(err)
	}
	if cs.ID() == "" {
		t.Error("no Mcp-Session-Id: the session is not stateful")
	}
	if got := cs.InitializeResult().ServerInfo.Name; got != "http-demo" {
		t.Errorf("server name %q", got)
	}
	for _, data := range []string{"over http", strings.Repeat("y", 4<<20)} {
		res, err := cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: "echo_big", Arguments: map[string]any{"data": data}})
		if err != nil || onlyText(t, res) != data {
			t.Fatalf("echo_big of %d bytes: err %v", len(data), err)
		}
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close session: %v", err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v; stderr:\n%s", err, strings.Join(stderr.all(), "\n"))
	}
}

func TestProcessStreamableHTTPIgnoreUnknown(t *testing.T) {
	_, stderr, endpoint, hc := startHTTPDemo(t, "--ignore-unknown")
	cs, err := connectHTTP(testCtx(t), endpoint, hc, legacyVersion)
	if err != nil {
		t.Fatalf("legacy client: %v", err)
	}
	_ = cs.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if cs, err := connectHTTP(ctx, endpoint, hc, modernVersion); err == nil {
		_ = cs.Close()
		t.Fatal("default client connected to a server that ignores server/discover")
	}
	stderr.waitContaining(t, `ignoring request "server/discover"`)
}

func TestProcessStreamableHTTPCrashAfter(t *testing.T) {
	cmd, stderr, endpoint, hc := startHTTPDemo(t, "--crash-after", "1")
	// Without the standalone SSE stream: when the process exits, go-sdk's
	// client would see that stream break and could fail the session
	// before it reads the result already delivered on the POST — a race
	// in the client, not in what this test checks.
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpdemo-test", Version: "1"}, nil)
	cs, err := client.Connect(testCtx(t), &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "last words"}})
	if err != nil || onlyText(t, res) != "last words" {
		t.Fatalf("echo = %+v, %v", res, err)
	}
	err = cmd.Wait()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != CrashExitCode {
		t.Errorf("wait = %v, want exit status %d; stderr:\n%s", err, CrashExitCode, strings.Join(stderr.all(), "\n"))
	}
}

func TestProcessExitImmediately(t *testing.T) {
	cmd, stderr := demoCommand(t, "--exit-immediately", "7")
	err := cmd.Run()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 7 {
		t.Fatalf("run = %v, want exit status 7", err)
	}
	if got := stderr.all(); len(got) != 1 || got[0] != startupFailureMessage {
		t.Errorf("stderr = %q", got)
	}
}

func TestProcessHelp(t *testing.T) {
	out, err := exec.Command(demoBinary, "--help").Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != Usage() {
		t.Errorf("--help printed something other than Usage():\n%s", out)
	}
}

// BenchmarkProcessEcho measures one echo round trip to a real mcp-demo
// subprocess over stdio, the path every host test pays for.
func BenchmarkProcessEcho(b *testing.B) {
	cmd := procwatch.DieWithTest(exec.Command(demoBinary))
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpdemo-bench", Version: "1"}, nil)
	cs, err := client.Connect(b.Context(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "bench"}}
	for b.Loop() {
		if _, err := cs.CallTool(b.Context(), params); err != nil {
			b.Fatal(err)
		}
	}
}
