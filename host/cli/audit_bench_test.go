package cli_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/host/cli"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/identity"
)

// BenchmarkAuditQuery scans a generated ledger of 300 000 records (100 000
// calls, each with a 1 KiB result; about 180 MB) with `toolgate audit
// --stats`, with a filter that matches little, and with `audit verify`.
// Run with -benchtime 1x; MB/s and records/s are the result.
func BenchmarkAuditQuery(b *testing.B) {
	const calls = 100_000
	path := filepath.Join(b.TempDir(), "audit.jsonl")
	a, err := events.OpenAudit(path)
	if err != nil {
		b.Fatal(err)
	}
	result := json.RawMessage(strconv.Quote(strings.Repeat("r", 1024)))
	for i := range calls {
		c := events.Call{CallID: fmt.Sprintf("call_%d", i), SessionID: "s1", Server: "demo", Tool: fmt.Sprintf("tool%d", i%20),
			Caller: &identity.Caller{Subject: fmt.Sprintf("user%d", i%7)}}
		a.Emit(events.ToolCallBegin{At: time.Now(), Call: c, Arguments: json.RawMessage(`{"text":"hello"}`)})
		a.Emit(events.ApprovalDecision{At: time.Now(), Call: c, Step: "hook", By: "policy", Verdict: events.VerdictApproved})
		a.Emit(events.ToolCallEnd{At: time.Now(), Call: c, Status: events.CallCompleted, Result: result})
	}
	a.Close()
	st, _ := os.Stat(path)
	for _, args := range [][]string{
		{"audit", "--stats", path},
		{"audit", "--tool", "tool3", "--caller", "user2", "--decision", "allow", "--json", path},
		{"audit", "verify", path},
	} {
		b.Run(args[1], func(b *testing.B) {
			start := time.Now()
			n := 0
			for b.Loop() {
				if code := cli.Run(b.Context(), args, cli.IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}); code != 0 {
					b.Fatalf("exit %d", code)
				}
				n++
			}
			secs := time.Since(start).Seconds()
			b.ReportMetric(float64(st.Size())*float64(n)/secs/1e6, "MB/s")
			b.ReportMetric(float64(calls*3)*float64(n)/secs, "records/s")
		})
	}
}
