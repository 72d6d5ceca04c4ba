package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/cli"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/internal/testwait"
)

// TestShadowHooksInAServeSession runs two `toolgate serve` sessions side
// by side, one with two shadow hooks (one denies everything, one never
// answers) and one without, and calls echo on each in turn: every real
// decision stays allow, the calls are not slowed, and --shadow-diff
// shows both hooks.
func TestShadowHooksInAServeSession(t *testing.T) {
	dir := exampleDir(t)
	write := func(name, audit, plugins string) string {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(fmt.Sprintf(`audit { path = %q }
%s
server "demo" {
  command = %q
  args    = ["--name", "demo"]
  default_tools_approval_mode = "approve"
}
`, audit, plugins, filepath.Join(dir, "bin", "mcp-demo"))), 0o600)
		return path
	}
	shadowAudit := filepath.Join(dir, "shadow.jsonl")
	shadowCfg := write("shadow.hcl", shadowAudit, fmt.Sprintf(`
plugin "deny-all" {
  kind = "hook"
  mode = "shadow"
  path = %q
}
plugin "hangs" {
  kind    = "hook"
  mode    = "shadow"
  path    = %q
  timeout = "60s"
}`, testbin.Path(t, "testplugins/hook-deny"), testbin.Path(t, "testplugins/hook-slow")))
	plainCfg := write("plain.hcl", filepath.Join(dir, "plain.jsonl"), "")

	shadowed, shadowDone, shadowErr := serveSession(t, shadowCfg)
	plain, plainDone, _ := serveSession(t, plainCfg)
	echo := func(cs *mcp.ClientSession) time.Duration {
		start := time.Now()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__demo__echo", Arguments: map[string]any{"text": "hi"}})
		if err != nil || res.IsError {
			t.Fatalf("echo: %v %+v", err, res)
		}
		return time.Since(start)
	}
	echo(shadowed) // the first call starts the plugins
	echo(plain)
	const calls = 20
	var withShadow, without []time.Duration
	for range calls {
		withShadow = append(withShadow, echo(shadowed))
		without = append(without, echo(plain))
	}
	median := func(d []time.Duration) time.Duration {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[len(d)/2]
	}
	ratio := float64(median(withShadow)) / float64(median(without))
	t.Logf("median call latency with shadow hooks (one hanging) / without: %.2f (%v vs %v)", ratio, median(withShadow), median(without))
	if ratio > 3 {
		t.Errorf("shadow hooks slowed calls %.1fx", ratio)
	}
	// Shadow hooks answer after the calls (the first waits for its
	// plugin to start): wait for deny-all's answers to reach the ledger.
	waitForFile(t, shadowAudit, func(data []byte) bool {
		return bytes.Count(data, []byte(`"by":"deny-all","shadow_decision":"deny"`)) == calls+1
	})
	_ = shadowed.Close()
	_ = plain.Close()
	if code := testwait.Recv(t, shadowDone, "the shadowed serve to exit"); code != cli.ExitOK {
		t.Fatalf("serve exit %d\n%s", code, shadowErr.String())
	}
	testwait.Recv(t, plainDone, "the plain serve to exit")

	res := run(t, nil, "audit", "--shadow-diff", "--json", shadowAudit)
	var rows []struct {
		Tool, Enforced, Shadow, Hook string
		Count                        int
	}
	if err := json.Unmarshal([]byte(res.stdout), &rows); err != nil {
		t.Fatalf("--shadow-diff --json: %v\n%s%s", err, res.stdout, res.stderr)
	}
	got := map[string]string{}
	for _, r := range rows {
		if r.Enforced != "allow" || r.Count != calls+1 {
			t.Errorf("shadow-diff row %+v, want %d calls enforced allow", r, calls+1)
		}
		got[r.Hook] = r.Shadow
	}
	if got["deny-all"] != "deny" || got["hangs"] != "error" {
		t.Errorf("shadow-diff = %+v, want deny-all deny and hangs error", rows)
	}
	// Every real decision was allow.
	if res := run(t, nil, "audit", "--event", "approval_decision", "--decision", "deny", shadowAudit); res.code != 0 || len(res.stdout) == 0 || countLines(res.stdout) != 1 {
		t.Errorf("a shadow hook changed a real decision:\n%s", res.stdout)
	}
}

func countLines(s string) int {
	n := 0
	for _, c := range s {
		if c == '\n' {
			n++
		}
	}
	return n
}

// waitForFile waits until cond holds for the file's content, re-checking
// on every write to it (fsnotify), never on a timer.
func waitForFile(t *testing.T, path string, cond func([]byte) bool) {
	t.Helper()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Add(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
	wait := testwait.Context(t)
	for {
		data, _ := os.ReadFile(path)
		if cond(data) {
			return
		}
		select {
		case <-w.Events:
		case err := <-w.Errors:
			t.Fatal(err)
		case <-wait.Done():
			t.Fatalf("timed out waiting for %s to reach the expected state:\n%s", path, data)
		}
	}
}
