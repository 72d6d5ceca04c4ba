package events_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/mcpclient"
)

// BenchmarkAuditRedaction measures what redaction (the server's secret
// values plus mcpclient.SecretFormats, as toolgate wires the audit log)
// adds to one audit record, against the same record written without
// redaction in the same run: the two sinks alternate record by record,
// so machine load hits both alike. It reports ns per record of each and
// the ratio, for a 2 KiB result without secrets and one with a token.
//
//	go test -run '^$' -bench BenchmarkAuditRedaction -benchtime 20000x ./host/events/
func BenchmarkAuditRedaction(b *testing.B) {
	prose := strings.Repeat("The quarterly report lists 14 open items; see section 3.2 for details. ", 28)
	for _, tc := range []struct{ name, text string }{
		{"clean-2KiB", prose},
		{"with-token-2KiB", prose + "\nAKIA" + "Z3CANARYEXAMPLE7"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			dir := b.TempDir()
			plain, err := events.OpenAudit(filepath.Join(dir, "plain.jsonl"))
			if err != nil {
				b.Fatal(err)
			}
			defer plain.Close()
			secrets := &mcpclient.Secrets{}
			secrets.Add("sk-live-0123456789abcdef", "hunter2-but-longer", "a-third-configured-secret")
			red, err := events.OpenAudit(filepath.Join(dir, "redacted.jsonl"), events.WithAuditRedactor(secrets.RedactRecord))
			if err != nil {
				b.Fatal(err)
			}
			defer red.Close()
			result, err := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": tc.text}}})
			if err != nil {
				b.Fatal(err)
			}
			ev := events.ToolCallEnd{
				At:       time.Now(),
				Call:     events.Call{CallID: "call_1", Server: "s", Tool: "report", ModelName: "mcp__s__report"},
				Status:   events.CallCompleted,
				Duration: time.Millisecond,
				Result:   result,
			}
			var tPlain, tRed time.Duration
			b.ResetTimer()
			emit := func(sink *events.AuditSink, total *time.Duration) {
				t0 := time.Now()
				sink.Emit(ev)
				*total += time.Since(t0)
			}
			for i := range b.N {
				// Alternate which goes first, so neither always runs
				// with the other's work still in the caches.
				if i%2 == 0 {
					emit(plain, &tPlain)
					emit(red, &tRed)
				} else {
					emit(red, &tRed)
					emit(plain, &tPlain)
				}
			}
			b.StopTimer()
			n := float64(b.N)
			b.ReportMetric(float64(tPlain.Nanoseconds())/n, "plain-ns/record")
			b.ReportMetric(float64(tRed.Nanoseconds())/n, "redacted-ns/record")
			b.ReportMetric(float64(tRed)/float64(tPlain), "ratio")
		})
	}
}
