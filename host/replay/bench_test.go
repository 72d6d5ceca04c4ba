package replay_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/replay"
	"github.com/toolgate/toolgate/internal/testbin"
)

// benchLedger records calls with the real sink until the ledger holds
// n records (3 per call: begin, decision, end).
func benchLedger(b *testing.B, path string, n int) {
	a, err := events.OpenAudit(path)
	if err != nil {
		b.Fatal(err)
	}
	tools := []string{"echo", "add", "write_file"}
	for i := 0; i < n/3; i++ {
		c := events.Call{CallID: fmt.Sprintf("call_%d", i), SessionID: "s1", Server: "demo", Tool: tools[i%3]}
		a.Emit(events.ToolCallBegin{At: time.Now(), Call: c, Arguments: json.RawMessage(`{"text":"hello","path":"x.txt"}`)})
		a.Emit(events.ApprovalDecision{At: time.Now(), Call: c, Step: "hook", By: "policy", Verdict: events.VerdictApproved})
		a.Emit(events.ToolCallEnd{At: time.Now(), Call: c, Status: events.CallCompleted})
	}
	a.Close()
}

// BenchmarkReplay100k replays a ledger of 100 000 records (33 333
// calls): with a candidate decided by modes alone (in process), and with
// the real policy hook plugin deciding every call over gRPC. Run with
// -benchtime 1x; records/s is the result.
func BenchmarkReplay100k(b *testing.B) {
	const records = 100_000
	dir := b.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	benchLedger(b, path, records)
	policy := testbin.Path(b, "plugins/toolgate-hook-policy")
	cands := []struct{ name, src string }{
		{"modes", `server "demo" {
  command = "unused"
  default_tools_approval_mode = "prompt"
}`},
		{"policy-plugin", fmt.Sprintf(`plugin "policy" {
  kind = "hook"
  path = %q
  config {
    rule {
      tool     = "write_file"
      decision = "deny"
    }
    rule {
      tool     = "*"
      decision = "allow"
    }
  }
}
server "demo" {
  command = "unused"
  default_tools_approval_mode = "prompt"
}`, policy)},
	}
	for _, c := range cands {
		b.Run(c.name, func(b *testing.B) {
			cfgPath := filepath.Join(dir, c.name+".hcl")
			os.WriteFile(cfgPath, []byte(c.src), 0o600)
			cfg := loadConfigFile(b, cfgPath)
			r := replay.New(cfg, replay.Options{})
			defer r.Close()
			var calls int
			start := time.Now()
			for b.Loop() {
				res, err := r.Run(b.Context(), []string{path})
				if err != nil {
					b.Fatal(err)
				}
				calls += res.Replayed
			}
			secs := time.Since(start).Seconds()
			b.ReportMetric(float64(calls)*3/secs, "records/s")
			b.ReportMetric(float64(calls)/secs, "calls/s")
		})
	}
}
