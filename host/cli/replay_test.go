package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/cli"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/internal/testwait"
)

// replayConfig is a config with the demo server (every call goes to the
// hooks: approval_mode prompt) and the policy hook with rules.
func replayConfig(dir, audit, callLog, rules string) string {
	auditLine := ""
	if audit != "" {
		auditLine = fmt.Sprintf("audit { path = %q }\n", audit)
	}
	return auditLine + fmt.Sprintf(`
approval { policy = "on-request" }
plugin "policy" {
  kind     = "hook"
  path     = %q
  on_error = "deny"
  config {
    default = "ask"
%s
  }
}
server "demo" {
  command = %q
  args    = ["--name", "demo", "--root", %q, "--call-log", %q]
  default_tools_approval_mode = "prompt"
}
`, filepath.Join(dir, "bin", "plugins", "toolgate-hook-policy"), rules, filepath.Join(dir, "bin", "mcp-demo"), dir, callLog)
}

const recordedRules = `
    rule {
      name     = "echo-ok"
      tool     = "echo"
      decision = "allow"
    }
    rule {
      name     = "add-ok"
      tool     = "add"
      decision = "allow"
    }
    rule {
      name     = "no-writes"
      tool     = "write_file"
      decision = "deny"
      message  = "no-writes: writing is disabled"
    }
`

// candidateRules tightens echo and loosens write_file; add is unchanged.
const candidateRules = `
    rule {
      name     = "no-echo"
      tool     = "echo"
      decision = "deny"
      message  = "no-echo: echo is disabled"
    }
    rule {
      name     = "add-ok"
      tool     = "add"
      decision = "allow"
    }
    rule {
      name     = "writes-ok"
      tool     = "write_file"
      decision = "allow"
    }
`

// TestReplayARecordedServeSession records a real `toolgate serve`
// session (mcp-demo, the policy hook plugin), then replays its ledger
// against a candidate that tightens one rule and loosens another.
func TestReplayARecordedServeSession(t *testing.T) {
	dir := exampleDir(t)
	audit := filepath.Join(dir, "audit.jsonl")
	callLog := filepath.Join(dir, "calls.jsonl")
	recorded := filepath.Join(dir, "recorded.hcl")
	os.WriteFile(recorded, []byte(replayConfig(dir, audit, callLog, recordedRules)), 0o600)

	cs, done, stderr := serveSession(t, recorded)
	call := func(name string, args map[string]any, wantDenied bool) {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError != wantDenied {
			t.Fatalf("%s: %v %+v (want denied %v)", name, err, res, wantDenied)
		}
	}
	call("mcp__demo__echo", map[string]any{"text": "one"}, false)
	call("mcp__demo__add", map[string]any{"a": 1, "b": 2}, false)
	call("mcp__demo__write_file", map[string]any{"path": "x.txt", "content": "hi"}, true)
	call("mcp__demo__echo", map[string]any{"text": "two"}, false)
	_ = cs.Close()
	if code := testwait.Recv(t, done, "serve to exit"); code != cli.ExitOK {
		t.Fatalf("serve exit code %d\n%s", code, stderr.String())
	}
	executed, _ := os.ReadFile(callLog)
	if n := bytes.Count(executed, []byte("\n")); n != 3 {
		t.Fatalf("the demo server ran %d calls, want 3 (write_file was denied):\n%s", n, executed)
	}
	if res := run(t, nil, "audit", "verify", audit); res.code != 0 {
		t.Fatalf("the recorded ledger does not verify: %s%s", res.stdout, res.stderr)
	}

	// The candidate: same server and call log, so anything it ran would show.
	candidate := filepath.Join(dir, "candidate.hcl")
	os.WriteFile(candidate, []byte(replayConfig(dir, "", callLog, candidateRules)), 0o600)
	res := run(t, nil, "replay", "--config", candidate, "--json", audit)
	if res.code != cli.ExitLoosened {
		t.Fatalf("replay exit %d, want %d (write_file loosens)\n%s\n%s", res.code, cli.ExitLoosened, res.stdout, res.stderr)
	}
	var out struct {
		Replayed, Unchanged int
		Changed             []struct {
			Seq    uint64
			CallID string `json:"call_id"`
			Tool   string
			Before struct{ Decision, By string }
			After  struct{ Decision, By, Text string }
		}
	}
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
		t.Fatalf("--json: %v\n%s", err, res.stdout)
	}
	var got []string
	for _, c := range out.Changed {
		if c.Seq == 0 || c.CallID == "" {
			t.Errorf("a change without its record id: %+v", c)
		}
		got = append(got, fmt.Sprintf("%s %s→%s %s", c.Tool, c.Before.Decision, c.After.Decision, c.After.By))
	}
	want := []string{"echo allow→deny policy", "write_file deny→allow policy", "echo allow→deny policy"}
	if out.Replayed != 4 || out.Unchanged != 1 || strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("replay: %d replayed, %d unchanged, changes %q; want 4, 1, %q", out.Replayed, out.Unchanged, got, want)
	}
	if after, _ := os.ReadFile(callLog); !bytes.Equal(after, executed) {
		t.Errorf("replay executed calls on the server:\n%s", after[len(executed):])
	}
	// The table groups by cause.
	res = run(t, nil, "replay", "--config", candidate, audit)
	if res.code != cli.ExitLoosened || !strings.Contains(res.stdout, "deny → allow (loosens), 1 call(s): hook policy") || !strings.Contains(res.stdout, "no-echo: echo is disabled") {
		t.Errorf("replay table:\n%s\n%s", res.stdout, res.stderr)
	}

	// The recorded config itself changes nothing.
	if res := run(t, nil, "replay", "--config", recorded, audit); res.code != 0 || !strings.Contains(res.stdout, "4 unchanged") {
		t.Errorf("replay with the recorded config: %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// serveSession runs `toolgate serve --config cfg` over stdio and connects
// a client once the demo server's tools are listed. Close the session,
// then read done for serve's exit code.
func serveSession(t *testing.T, cfg string) (*mcp.ClientSession, chan int, *testbin.Buffer) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr := &testbin.Buffer{}
	done := make(chan int, 1)
	go func() {
		code := cli.Run(t.Context(), []string{"serve", "--config", cfg}, cli.IO{In: inR, Out: outW, Err: stderr, LookupEnv: noUserConfig})
		_ = outW.Close()
		done <- code
	}()
	changed := make(chan struct{}, 16)
	c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	cs, err := c.Connect(t.Context(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wait := testwait.Context(t)
	for {
		var names []string
		for tool, err := range cs.Tools(t.Context(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, tool.Name)
		}
		if slices.Contains(names, "mcp__demo__echo") {
			return cs, done, stderr
		}
		select {
		case <-changed:
		case <-wait.Done():
			t.Fatalf("timed out waiting for the demo server's tools; tools = %v\n%s", names, stderr.String())
		}
	}
}
