package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/host/cli"
)

// hungConfig has a healthy server "up" (a demo server with resources and
// prompts) and a server "hung" that never answers initialize, with a
// startup timeout far longer than any test: until toolgate stops it,
// it is starting.
func hungConfig(t *testing.T, audit string) string {
	return writeConfig(t, `
audit_log = "`+audit+`"
server "up" {
  command = "MCP_DEMO"
  args    = ["--resources", "2"]
}
server "hung" {
  command             = "MCP_DEMO"
  args                = ["--hang-initialize"]
  startup_timeout_sec = 3600
}
`)
}

// runGuarded runs the CLI with a generous bound that only turns a hang
// (the bug) into a failure instead of the test binary's timeout.
func runGuarded(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	code := cli.Run(ctx, args, cli.IO{In: strings.NewReader(""), Out: &out, Err: &errb, LookupEnv: noUserConfig})
	return result{code, out.String(), errb.String()}
}

// auditEvents returns the audit log's records as "event server status".
func auditEvents(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct{ Event, Server, Status string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.TrimSpace(r.Event+" "+r.Server+" "+r.Status))
	}
	return out
}

// TestOneServerCommandsDoNotWaitForAHungServer: call, read and prompts
// --server of a healthy server answer while another server hangs in its
// handshake with an hour-long startup timeout. The audit log shows the
// order: the call ended while the hung server was still starting, and
// it was cancelled only when the command stopped it.
func TestOneServerCommandsDoNotWaitForAHungServer(t *testing.T) {
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg := hungConfig(t, audit)

	r := runGuarded(t, "call", "mcp__up__echo", `{"text":"hi"}`, "--config", cfg)
	if r.code != cli.ExitOK || !strings.Contains(r.stdout, `"text":"hi"`) {
		t.Fatalf("call of a healthy server's tool beside a hung one: %+v", r)
	}
	ev := auditEvents(t, audit)
	end, cancelled := -1, -1
	for i, e := range ev {
		switch e {
		case "tool_call_end up completed":
			end = i
		case "server_startup hung cancelled":
			cancelled = i
		}
	}
	if end < 0 || cancelled < end {
		t.Fatalf("audit log %q: want the call's end before the hung server is cancelled", ev)
	}

	r = runGuarded(t, "read", "up", "demo://doc/00001", "--config", cfg)
	if r.code != cli.ExitOK || strings.TrimSpace(r.stdout) == "" {
		t.Errorf("read from a healthy server beside a hung one: %+v", r)
	}
	r = runGuarded(t, "prompts", "--server", "up", "--config", cfg)
	if r.code != cli.ExitOK || !strings.Contains(r.stdout, "greet") {
		t.Errorf("prompts --server of a healthy server beside a hung one: %+v", r)
	}

	// A tool of the hung server itself still waits for it: with the
	// context ended, the call ends waiting, or with the hung server
	// cancelled, never with a bare unknown-tool error of a half-known
	// catalog.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var out, errb bytes.Buffer
	code := cli.Run(ctx, []string{"call", "mcp__hung__echo", "--config", cfg}, cli.IO{In: strings.NewReader(""), Out: &out, Err: &errb, LookupEnv: noUserConfig})
	if code != cli.ExitFailure || !strings.Contains(errb.String(), "waiting for servers") && !strings.Contains(errb.String(), `MCP server "hung" is cancelled`) {
		t.Errorf("call of the hung server's tool with its context ended: exit %d, stderr %q", code, errb.String())
	}
}
