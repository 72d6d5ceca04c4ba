package events

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/host/identity"
	"github.com/toolgate/toolgate/host/ledger"
)

// plainAudit is the audit write as it was before the ledger: encode,
// redact, one write(2) under the sink's lock. It is the baseline the
// ledger's cost is measured against.
type plainAudit struct {
	mu sync.Mutex
	f  *os.File
}

func (p *plainAudit) Emit(e Event) {
	rec, _ := encodeRecord(e)
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _ = p.f.Write(rec)
}

// oneCall emits what one tool call records: its begin, the approval
// decision and its end with a small result.
func oneCall(s Sink, i int) {
	c := Call{CallID: "call_0123456789abcdef", SessionID: "sess_1", Server: "demo", Tool: "write_file",
		ModelName: "mcp__demo__write_file", Caller: &identity.Caller{Subject: "alice", Issuer: "https://idp.example"}}
	now := time.Now()
	s.Emit(ToolCallBegin{At: now, Call: c, Arguments: json.RawMessage(`{"path":"notes/today.md","content":"` + strings.Repeat("x", 200) + `"}`)})
	s.Emit(ApprovalDecision{At: now, Call: c, Step: "hook", By: "policy", Verdict: VerdictApproved, Rationale: "allowed by permission hook"})
	s.Emit(ToolCallEnd{At: now, Call: c, Status: CallCompleted, Duration: time.Millisecond,
		Result: json.RawMessage(`{"content":[{"type":"text","text":"wrote 200 bytes"}]}`)})
}

// BenchmarkLedgerWrite measures the cost of one call's audit records
// (3 records) with the hash chain, and with signed checkpoints (every
// 1000 records, the default, and after every record), against the plain
// write it replaced. The variants run interleaved in rounds in one run,
// so a loaded machine slows them alike; the ratios are the result.
func BenchmarkLedgerWrite(b *testing.B) {
	dir := b.TempDir()
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	signer := ledger.NewSigner(priv)
	f, err := os.OpenFile(filepath.Join(dir, "plain.jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	open := func(name string, opts ...AuditOption) *AuditSink {
		a, err := OpenAudit(filepath.Join(dir, name), opts...)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { a.Close() })
		return a
	}
	variants := []struct {
		name string
		sink Sink
	}{
		{"plain", &plainAudit{f: f}},
		{"chain", open("chain.jsonl")},
		{"signed-1000", open("signed.jsonl", WithLedgerSigner(signer, 1000))},
		{"signed-every-record", open("signed1.jsonl", WithLedgerSigner(signer, 1))},
	}
	const round = 200
	took := make([]time.Duration, len(variants))
	calls := 0
	b.ResetTimer()
	for calls < b.N {
		for v := range variants {
			start := time.Now()
			for i := range round {
				oneCall(variants[v].sink, calls+i)
			}
			took[v] += time.Since(start)
		}
		calls += round
	}
	b.StopTimer()
	base := float64(took[0]) / float64(calls)
	b.ReportMetric(base, "plain-ns/call")
	for v := 1; v < len(variants); v++ {
		per := float64(took[v]) / float64(calls)
		b.ReportMetric(per, variants[v].name+"-ns/call")
		b.ReportMetric(per/base, variants[v].name+"/plain")
	}
}
