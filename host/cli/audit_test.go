package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/identity"
	"github.com/toolgate/toolgate/host/ledger"
)

// recordCalls writes a ledger of n approval decisions with the real sink:
// tools t0..t2, alternating verdicts, two callers.
func recordCalls(t *testing.T, path string, n int, opts ...events.AuditOption) {
	t.Helper()
	a, err := events.OpenAudit(path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i := range n {
		c := events.Call{CallID: fmt.Sprintf("c%d", i), Server: "demo", Tool: fmt.Sprintf("t%d", i%3),
			Caller: &identity.Caller{Subject: fmt.Sprintf("user%d", i%2)}}
		a.Emit(events.ToolCallBegin{At: at.Add(time.Duration(i) * time.Minute), Call: c, Arguments: []byte(`{"i":1}`)})
		verdict := events.VerdictApproved
		if i%2 == 1 {
			verdict = events.VerdictDenied
		}
		a.Emit(events.ApprovalDecision{At: at.Add(time.Duration(i) * time.Minute), Call: c, Step: "hook", By: "policy", Verdict: verdict})
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestAuditVerifyCommand(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	keyFile := filepath.Join(dir, "ledger.key")
	res := run(t, nil, "audit", "keygen", "--out", keyFile)
	if res.code != 0 || !strings.Contains(res.stdout, "PUBLIC KEY") {
		t.Fatalf("keygen: %d %s %s", res.code, res.stdout, res.stderr)
	}
	pubFile := filepath.Join(dir, "ledger.pub")
	os.WriteFile(pubFile, []byte(res.stdout), 0o600)
	signer, err := ledger.LoadSigner(keyFile, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	recordCalls(t, path, 30, events.WithLedgerSigner(signer, 10),
		events.WithLedgerRotation(events.LedgerRotation{MaxBytes: 5000}))
	files := append([]string{"audit", "verify", "--key", pubFile}, rotated(path)...)
	if res := run(t, nil, files...); res.code != 0 || !strings.Contains(res.stdout, "intact") || !strings.Contains(res.stdout, "signed checkpoint(s) verified") {
		t.Fatalf("verify intact: %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if strings.Contains(res.stderr+res.stdout, "PRIVATE") {
		t.Fatal("key material printed")
	}

	// Edit one record of the newest file: exit 1, naming the line.
	data, _ := os.ReadFile(path)
	ls := bytes.SplitAfter(data, []byte{'\n'})
	if !bytes.Contains(ls[2], []byte(`"server":"demo"`)) {
		t.Fatalf("line 3 is not a call record: %s", ls[2])
	}
	ls[2] = bytes.Replace(ls[2], []byte(`"server":"demo"`), []byte(`"server":"dem0"`), 1)
	os.WriteFile(path, bytes.Join(ls, nil), 0o600)
	res = run(t, nil, append([]string{"audit", "verify"}, rotated(path)...)...)
	if res.code != 1 || !strings.Contains(res.stderr, "audit.jsonl:3") || !strings.Contains(res.stderr, "was changed") {
		t.Fatalf("verify of an edited ledger: %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}

	old := filepath.Join(dir, "old.jsonl")
	os.WriteFile(old, []byte(`{"event":"tool_call_begin","tool":"x"}`+"\n"), 0o600)
	if res := run(t, nil, "audit", "verify", old); res.code != 1 || !strings.Contains(res.stderr, "not a chained ledger") {
		t.Fatalf("verify of an old log: %d %s", res.code, res.stderr)
	}
	if res := run(t, nil, "audit", "--tool", "x", old); res.code != 0 || !strings.Contains(res.stdout, "tool_call_begin") || !strings.Contains(res.stderr, "1 record(s) are not chained") {
		t.Fatalf("an old log must still be readable: %d %s %s", res.code, res.stdout, res.stderr)
	}
}

func rotated(path string) []string {
	files, _ := filepath.Glob(strings.TrimSuffix(path, ".jsonl") + "*.jsonl")
	return files
}

func TestAuditQueryAndStats(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	recordCalls(t, path, 12)
	res := run(t, nil, "audit", "--tool", "t1", "--decision", "deny", "--json", path)
	if res.code != 0 {
		t.Fatalf("%d %s", res.code, res.stderr)
	}
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(res.stdout), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("not JSON lines: %q", l)
		}
		ids = append(ids, rec["call_id"].(string))
	}
	// t1 is i%3==1: 1,4,7,10; denied is odd: 1,7.
	if strings.Join(ids, ",") != "c1,c7" {
		t.Errorf("--tool t1 --decision deny = %v, want c1,c7", ids)
	}
	res = run(t, nil, "audit", "--since", "2026-12-01T09:06:00Z", "--until", "2026-12-01T09:08:00Z", "--event", "approval_decision", "--caller", "user1", path)
	if res.code != 0 || strings.Count(res.stdout, "approval_decision") != 1 || !strings.Contains(res.stdout, "c7") {
		t.Errorf("time range and caller: %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = run(t, nil, "audit", "--stats", "--json", path)
	var rows []struct {
		Tool, Decision, Caller string
		Count                  int
	}
	if err := json.Unmarshal([]byte(res.stdout), &rows); err != nil {
		t.Fatalf("--stats --json: %v\n%s", err, res.stdout)
	}
	// Even i are user0 and allowed, odd user1 and denied: 3 tools × 2 = 6 groups of 2.
	if len(rows) != 6 {
		t.Fatalf("stats rows = %+v", rows)
	}
	for _, r := range rows {
		if r.Count != 2 || (r.Decision == "allow") != (r.Caller == "user0") {
			t.Errorf("stats row %+v", r)
		}
	}
	if res := run(t, nil, "audit", "--since", "yesterday", path); res.code != 2 {
		t.Errorf("a bad --since must be a usage error: %d %s", res.code, res.stderr)
	}
}

// TestSignedLedgerFromTheConfig: a host started with audit { signing {
// key_env } } signs its ledger, `audit verify` finds the configured log
// (no files given) and checks it with the public key; a key that does
// not parse stops the host without showing it.
func TestSignedLedgerFromTheConfig(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "ledger.key")
	res := run(t, nil, "audit", "keygen", "--out", keyFile)
	if res.code != 0 {
		t.Fatalf("keygen: %s", res.stderr)
	}
	pubFile := filepath.Join(dir, "ledger.pub")
	os.WriteFile(pubFile, []byte(res.stdout), 0o600)
	key, _ := os.ReadFile(keyFile)
	cfg := writeConfig(t, `audit {
  path = "audit.jsonl"
  signing { key_env = "LEDGER_KEY" }
}
`)
	env := map[string]string{"LEDGER_KEY": string(key)}
	for range 2 { // two runs: the second continues the chain
		if res := run(t, env, "servers", "--config", cfg); res.code != 0 {
			t.Fatalf("servers: %d %s", res.code, res.stderr)
		}
	}
	res = run(t, nil, "audit", "verify", "--config", cfg, "--key", pubFile)
	if res.code != 0 || !strings.Contains(res.stdout, "intact") || !strings.Contains(res.stdout, "2 signed checkpoint(s) verified") {
		t.Fatalf("verify of the configured log: %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	const bad = "bm90LWEta2V5LWF0LWFsbA=="
	res = run(t, map[string]string{"LEDGER_KEY": bad}, "servers", "--config", cfg)
	if res.code == 0 || !strings.Contains(res.stderr, "LEDGER_KEY") || strings.Contains(res.stderr+res.stdout, bad) {
		t.Errorf("a bad key: %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}
