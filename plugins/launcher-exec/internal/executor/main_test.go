package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/plugins/launcher-exec/internal/executor"
	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/launcher"
	"github.com/toolgate/toolgate/sdk/plugintest"
)

// pluginBinary is the plugin binary the tests run for real (testbin.Path).
const pluginBinary = "plugins/" + executor.Name

func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }

// fastClose makes the host side give up quickly on a process that ignores
// the shutdown sequence; the tests' servers exit at stdin EOF.
var fastClose = launcher.ClientOptions{StdinGrace: 5 * time.Second, TermGrace: time.Second, KillGrace: time.Second}

// inProcess serves a Launcher in-process, configures it with cfg and
// returns the host's client.
func inProcess(t testing.TB, cfg map[string]any) *launcher.Client {
	t.Helper()
	c := plugintest.LauncherWith(t, executor.New(executor.Options{}), fastClose)
	configure(t, c, cfg)
	return c
}

// binary starts the real plugin binary and configures it with cfg.
func binary(t testing.TB, cfg map[string]any) *plugintest.Binary {
	t.Helper()
	b, err := plugintest.StartBinary(t, testbin.Path(t, pluginBinary), sdk.KindLauncher, plugintest.BinaryOptions{Launcher: fastClose, LogLevel: "info"})
	if err != nil {
		t.Fatal(err)
	}
	configure(t, b.Plugin.(*launcher.Client), cfg)
	return b
}

func configure(t testing.TB, c *launcher.Client, cfg map[string]any) {
	t.Helper()
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	diags, err := c.Configure(t.Context(), raw)
	if err != nil || sdk.HasErrors(diags) {
		t.Fatalf("Configure(%s) = %v, %v", raw, diags, err)
	}
}

// demo is mcp-demo's path.
func demo(t testing.TB) string { return testbin.Path(t, "mcp-demo") }

// session is an MCP session over a launched process.
type session struct {
	*mcp.ClientSession
	proc   *launcher.RemoteProcess
	stderr *testbin.Buffer
}

// connect launches spec and connects an MCP client over the process. The
// session and process are closed when the test ends.
func connect(t testing.TB, c *launcher.Client, spec launcher.Spec) *session {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	p, err := c.Launch(ctx, spec)
	if err != nil {
		t.Fatalf("Launch: %v", err)
	}
	stderr := &testbin.Buffer{}
	drained := make(chan struct{})
	go func() { _, _ = io.Copy(stderr, p.Stderr()); close(drained) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "launcher-exec-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: p, Writer: p}, nil)
	if err != nil {
		_ = p.Close()
		<-drained
		t.Fatalf("Connect: %v; stderr: %s", err, stderr.String())
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = p.Close()
		<-drained
	})
	return &session{ClientSession: cs, proc: p, stderr: stderr}
}

// text calls tool and returns its one text block.
func (s *session) text(ctx context.Context, tool string, args map[string]any) (string, error) {
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) != 1 {
		return "", fmt.Errorf("%s: unexpected result %+v", tool, res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", fmt.Errorf("%s: unexpected content %T", tool, res.Content[0])
	}
	return tc.Text, nil
}

// jsonTool calls a tool that answers JSON and decodes it into v.
func (s *session) jsonTool(t testing.TB, tool string, args map[string]any, v any) {
	t.Helper()
	out, err := s.text(t.Context(), tool, args)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("%s answered %q: %v", tool, out, err)
	}
}

// remotePid asks mcp-demo for its own pid.
func (s *session) remotePid(t testing.TB) int {
	t.Helper()
	var p struct{ Pid int }
	s.jsonTool(t, "pid", nil, &p)
	if p.Pid <= 0 {
		t.Fatalf("pid tool answered pid %d", p.Pid)
	}
	return p.Pid
}

// writeScript writes an executable shell script into dir.
func writeScript(t testing.TB, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// baseEnv is what every test server gets: the race detector of a
// race-built child must not sleep at exit.
func baseEnv(extra map[string]string) map[string]string {
	env := map[string]string{"GORACE": "atexit_sleep_ms=0"}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

func startError(t testing.TB, err error) *launcher.StartError {
	t.Helper()
	var se *launcher.StartError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not a *launcher.StartError", err, err)
	}
	return se
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
