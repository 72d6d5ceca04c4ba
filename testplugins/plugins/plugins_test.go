// Tests of the test plugins as real processes, started through go-plugin
// exactly as the host starts plugins. They also carry an MCP session over
// launcher-local end to end.
package plugins_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/hook"
	"github.com/toolgate/toolgate/sdk/launcher"
	"github.com/toolgate/toolgate/sdk/plugintest"
	"github.com/toolgate/toolgate/testplugins/plugins/internal/fixture"
)

// binDir holds the test plugins, built once by TestMain (mcp-demo comes
// from internal/testbin).
var binDir string

// envPrebuilt names a directory that already holds the test plugins and
// mcp-demo (built from this tree), to skip building them.
const envPrebuilt = "TOOLGATE_TESTPLUGINS_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(envPrebuilt); dir != "" {
		binDir = dir
		os.Exit(runWithLeakCheck(m))
	}
	dir, err := os.MkdirTemp("", "toolgate-testplugins-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := 1
	if err := build(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = runWithLeakCheck(m)
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func runWithLeakCheck(m *testing.M) (code int) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(c int) { code = c }))
	return code
}

// build compiles every test plugin into dir.
func build(dir string) error {
	for _, args := range [][]string{
		{"build", "-o", dir + string(filepath.Separator), "./..."},
	} {
		cmd := exec.Command("go", args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

func bin(name string) string { return filepath.Join(binDir, name) }

var request = hook.Request{
	Server: "files", Tool: "write_file", ModelName: "mcp__files__write_file",
	Arguments: json.RawMessage(`{"path":"a"}`), ApprovalMode: "auto", Policy: "on-request",
	Permissions: "workspace-write", SessionID: "s", CallID: "c",
}

func TestHookAllow(t *testing.T) {
	h := plugintest.RunBinary(t, bin("hook-allow"), sdk.KindHook).(*hook.Client)
	info, err := h.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "hook-allow" || info.Kind != sdk.KindHook || !info.Has(string(hook.EventPermissionRequest)) ||
		!info.Has(string(hook.EventPreToolUse)) || !info.Has(string(hook.EventPostToolUse)) {
		t.Errorf("Info = %+v", info)
	}
	res, err := h.PermissionRequest(t.Context(), request)
	if err != nil || res.Decision != hook.DecisionAllow || res.Message != fixture.AllowMessage {
		t.Errorf("PermissionRequest = %+v, %v", res, err)
	}
	pre, err := h.PreToolUse(t.Context(), request)
	if err != nil || pre.Action != hook.ActionContinue {
		t.Errorf("PreToolUse = %+v, %v", pre, err)
	}
}

func TestHookDeny(t *testing.T) {
	t.Run("all events", func(t *testing.T) {
		h := plugintest.RunBinary(t, bin("hook-deny"), sdk.KindHook).(*hook.Client)
		perm, err := h.PermissionRequest(t.Context(), request)
		if err != nil || perm.Decision != hook.DecisionDeny || perm.Message != "denied by hook-deny" {
			t.Errorf("PermissionRequest = %+v, %v", perm, err)
		}
		pre, err := h.PreToolUse(t.Context(), request)
		if err != nil || pre.Action != hook.ActionBlock || pre.Reason != "denied by hook-deny" {
			t.Errorf("PreToolUse = %+v, %v", pre, err)
		}
	})
	t.Run("permission requests only", func(t *testing.T) {
		b, err := plugintest.StartBinary(t, bin("hook-deny"), sdk.KindHook, plugintest.BinaryOptions{
			Env: []string{fixture.EnvDenyEvents + "=permission_request"},
		})
		if err != nil {
			t.Fatal(err)
		}
		h := b.Plugin.(*hook.Client)
		if _, err := h.Info(t.Context()); err != nil {
			t.Fatal(err)
		}
		pre, err := h.PreToolUse(t.Context(), request)
		if err != nil || pre.Action != hook.ActionContinue {
			t.Errorf("PreToolUse of an unlisted event = %+v, %v; want continue", pre, err)
		}
		if perm, err := h.PermissionRequest(t.Context(), request); err != nil || perm.Decision != hook.DecisionDeny {
			t.Errorf("PermissionRequest = %+v, %v", perm, err)
		}
	})
}

func TestHookSlowTimesOut(t *testing.T) {
	h := plugintest.RunBinary(t, bin("hook-slow"), sdk.KindHook).(*hook.Client)
	for range 2 { // the plugin keeps serving after a timeout
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		_, err := h.PermissionRequest(ctx, request)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want context.DeadlineExceeded", err)
		}
	}
}

func TestHookCrash(t *testing.T) {
	t.Run("crash_after from Configure", func(t *testing.T) {
		b, err := plugintest.StartBinary(t, bin("hook-crash"), sdk.KindHook, plugintest.BinaryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		h := b.Plugin.(*hook.Client)
		if diags, err := h.Configure(t.Context(), json.RawMessage(`{"crash_after":2}`)); err != nil || len(diags) != 0 {
			t.Fatalf("Configure = %v, %v", diags, err)
		}
		if _, err := h.PermissionRequest(t.Context(), request); err != nil {
			t.Fatalf("first call: %v", err)
		}
		if _, err := h.PermissionRequest(t.Context(), request); !errors.Is(err, sdk.ErrPluginExited) {
			t.Fatalf("second call: %v, want sdk.ErrPluginExited", err)
		}
		<-h.Exited()
		if !b.Client.Exited() {
			t.Error("go-plugin does not report the exit")
		}
		if _, err := h.PreToolUse(t.Context(), request); !errors.Is(err, sdk.ErrPluginExited) {
			t.Errorf("call after the crash: %v, want sdk.ErrPluginExited", err)
		}
	})
	t.Run("crash_after from the environment", func(t *testing.T) {
		b, err := plugintest.StartBinary(t, bin("hook-crash"), sdk.KindHook, plugintest.BinaryOptions{
			Env: []string{fixture.EnvCrashAfter + "=1"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Plugin.(*hook.Client).PreToolUse(t.Context(), request); !errors.Is(err, sdk.ErrPluginExited) {
			t.Fatalf("first call: %v, want sdk.ErrPluginExited", err)
		}
	})
	t.Run("invalid crash_after", func(t *testing.T) {
		h := plugintest.RunBinary(t, bin("hook-crash"), sdk.KindHook).(*hook.Client)
		diags, err := h.Configure(t.Context(), json.RawMessage(`{"crash_after":0}`))
		if err != nil || !sdk.HasErrors(diags) || strings.Join(diags[0].AttributePath, ".") != "crash_after" {
			t.Errorf("Configure = %+v, %v; want an error at crash_after", diags, err)
		}
	})
}

func TestHookGarbageIsBadResponse(t *testing.T) {
	h := plugintest.RunBinary(t, bin("hook-garbage"), sdk.KindHook).(*hook.Client)
	if _, err := h.PreToolUse(t.Context(), request); !errors.Is(err, sdk.ErrBadResponse) {
		t.Errorf("PreToolUse: %v, want sdk.ErrBadResponse", err)
	}
	if _, err := h.PermissionRequest(t.Context(), request); !errors.Is(err, sdk.ErrBadResponse) {
		t.Errorf("PermissionRequest: %v, want sdk.ErrBadResponse", err)
	}
}

func TestHookOldProtoIsRefused(t *testing.T) {
	_, err := plugintest.StartBinary(t, bin("hook-oldproto"), sdk.KindHook, plugintest.BinaryOptions{})
	if err == nil || !strings.Contains(err.Error(), "incompatible API version") || !strings.Contains(err.Error(), "99") {
		t.Errorf("StartBinary = %v, want an incompatible version error naming version 99", err)
	}
}

func TestHookStdoutBreaksTheHandshake(t *testing.T) {
	_, err := plugintest.StartBinary(t, bin("hook-stdout"), sdk.KindHook, plugintest.BinaryOptions{StartTimeout: 10 * time.Second})
	if err == nil || !strings.Contains(err.Error(), fixture.StdoutNoise) {
		t.Errorf("StartBinary = %v, want a handshake error quoting the stray line", err)
	}
}

func TestRunningAPluginByHandIsRefused(t *testing.T) {
	out, err := exec.Command(bin("hook-allow")).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "This binary is a plugin") {
		t.Errorf("running hook-allow directly: %v, %q", err, out)
	}
}

func TestLauncherDiesMidStream(t *testing.T) {
	l := plugintest.RunBinary(t, bin("launcher-dies"), sdk.KindLauncher).(*launcher.Client)
	p, err := l.Launch(t.Context(), launcher.Spec{Server: "doomed", Command: "anything"})
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(p)
	if line, err := r.ReadString('\n'); line != fixture.DyingOutput {
		t.Fatalf("first line = %q, %v", line, err)
	}
	_, _ = p.Write([]byte("this kills the plugin\n"))
	if _, err := r.ReadByte(); !errors.Is(err, sdk.ErrPluginExited) {
		t.Errorf("Read after the plugin died: %v, want sdk.ErrPluginExited", err)
	}
	if err := p.Wait(t.Context()); !errors.Is(err, sdk.ErrPluginExited) {
		t.Errorf("Wait after the plugin died: %v, want sdk.ErrPluginExited", err)
	}
	if err := p.Close(); !errors.Is(err, sdk.ErrPluginExited) {
		t.Errorf("Close after the plugin died: %v, want sdk.ErrPluginExited", err)
	}
	if _, err := l.Launch(t.Context(), launcher.Spec{Server: "next", Command: "x"}); !errors.Is(err, sdk.ErrPluginExited) {
		t.Errorf("Launch after the plugin died: %v, want sdk.ErrPluginExited", err)
	}
}

func TestLauncherLocalStartFailure(t *testing.T) {
	l := plugintest.RunBinary(t, bin("launcher-local"), sdk.KindLauncher).(*launcher.Client)
	_, err := l.Launch(t.Context(), launcher.Spec{Server: "s", Command: "/nonexistent/server"})
	var se *launcher.StartError
	if !errors.As(err, &se) || se.Kind != launcher.KindNotFound {
		t.Errorf("Launch = %v, want a not-found StartError", err)
	}
}

// connectOverLauncher starts mcp-demo through launcher-local and connects
// an MCP client to it over the launch stream.
func connectOverLauncher(t testing.TB, l *launcher.Client) *mcp.ClientSession {
	t.Helper()
	p, err := l.Launch(context.Background(), launcher.Spec{
		Server:  "demo",
		Command: testbin.Path(t, "mcp-demo"),
		Env:     map[string]string{"PATH": os.Getenv("PATH"), "GORACE": "atexit_sleep_ms=0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, p.Stderr()) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "plugins-test", Version: "0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: p, Writer: p}, nil)
	if err != nil {
		_ = p.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = p.Close()
	})
	return cs
}

func echoText(ctx context.Context, cs *mcp.ClientSession, text string) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) != 1 {
		return "", fmt.Errorf("unexpected result %+v", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", fmt.Errorf("unexpected content %T", res.Content[0])
	}
	return tc.Text, nil
}

func TestLauncherLocalCarriesAnMCPSession(t *testing.T) {
	l := plugintest.RunBinary(t, bin("launcher-local"), sdk.KindLauncher).(*launcher.Client)
	cs := connectOverLauncher(t, l)
	var names []string
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "echo") {
		t.Errorf("tools/list over the launcher = %v, want echo among them", names)
	}
	big := strings.Repeat("z", 3<<20) // several frames each way
	for _, text := range []string{"hello through the launcher", big} {
		got, err := echoText(t.Context(), cs, text)
		if err != nil || got != text {
			t.Fatalf("echo of %d bytes = %d bytes, %v", len(text), len(got), err)
		}
	}
	if err := cs.Close(); err != nil {
		t.Errorf("closing the session: %v", err)
	}
}
