package ledger_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/ledger"
)

// writeLedger records n tool calls with the real audit sink and closes it.
func writeLedger(t *testing.T, path string, n int, opts ...events.AuditOption) {
	t.Helper()
	a, err := events.OpenAudit(path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		a.Emit(events.ToolCallBegin{At: time.Now(), Call: events.Call{CallID: fmt.Sprintf("c%d", i), Server: "demo", Tool: fmt.Sprintf("t%d", i)},
			Arguments: []byte(`{"path":"/tmp/x"}`)})
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

func lines(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(data, []byte{'\n'})
}

func writeLines(t *testing.T, path string, ls [][]byte) {
	t.Helper()
	if err := os.WriteFile(path, bytes.Join(ls, nil), 0o600); err != nil {
		t.Fatal(err)
	}
}

func verify(t *testing.T, key ed25519.PublicKey, files ...string) *ledger.Report {
	t.Helper()
	r, err := ledger.Verify(files, key)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func wantBreak(t *testing.T, r *ledger.Report, line int, reason string) {
	t.Helper()
	if r.Break == nil {
		t.Fatalf("verify found nothing wrong, want line %d: %s", line, reason)
	}
	if r.Break.Line != line || !strings.Contains(r.Break.Reason, reason) {
		t.Fatalf("verify: %v; want line %d with %q", r.Break, line, reason)
	}
}

func TestVerifyIntactLedger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	writeLedger(t, path, 20)
	r := verify(t, nil, path)
	if r.Break != nil {
		t.Fatal(r.Break)
	}
	// ledger_start + 20 calls + ledger_close
	if r.Records != 22 || r.Last.Seq != 22 || !r.Closed {
		t.Errorf("report = %+v, want 22 records, closed", r)
	}
	// The chain is reproducible by hand: prev of line 2 is the SHA-256 of line 1.
	ls := lines(t, path)
	if !bytes.Contains(ls[1], []byte(`"prev":"`+ledger.Hash(ls[0])+`"`)) {
		t.Errorf("line 2 does not carry the hash of line 1:\n%s", ls[1])
	}
}

// TestVerifyNamesTheFirstBrokenRecord edits, deletes, reorders and
// truncates a real ledger file.
func TestVerifyNamesTheFirstBrokenRecord(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "orig.jsonl")
	writeLedger(t, orig, 20)
	base := lines(t, orig)
	cases := []struct {
		name   string
		tamper func([][]byte) [][]byte
		line   int
		reason string
	}{
		{"edit a field", func(ls [][]byte) [][]byte {
			ls[6] = bytes.Replace(ls[6], []byte(`"tool":"t5"`), []byte(`"tool":"t9"`), 1)
			return ls
		}, 7, "was changed"},
		{"edit into invalid JSON", func(ls [][]byte) [][]byte {
			ls[6] = bytes.Replace(ls[6], []byte(`{"event"`), []byte(`{event`), 1)
			return ls
		}, 7, "not a record"},
		{"delete a record", func(ls [][]byte) [][]byte { return append(ls[:6:6], ls[7:]...) }, 7, "deleted"},
		{"reorder two records", func(ls [][]byte) [][]byte {
			ls[6], ls[7] = ls[7], ls[6]
			return ls
		}, 7, "reordered"},
		{"remove the chain fields", func(ls [][]byte) [][]byte {
			i := bytes.Index(ls[6], []byte(`,"seq"`))
			ls[6] = append(append([]byte(nil), ls[6][:i]...), "}\n"...)
			return ls
		}, 7, "without seq/prev"},
		{"truncate mid-record", func(ls [][]byte) [][]byte {
			last := len(ls) - 2 // the final element is the empty string after the last newline
			ls[last] = ls[last][:len(ls[last])/2]
			return ls[:last+1]
		}, 22, "cut short"},
		{"cut the first records", func(ls [][]byte) [][]byte { return ls[3:] }, 1, "records before it are missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ls := make([][]byte, len(base))
			for i := range base {
				ls[i] = append([]byte(nil), base[i]...)
			}
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".jsonl")
			writeLines(t, path, c.tamper(ls))
			wantBreak(t, verify(t, nil, path), c.line, c.reason)
		})
	}
}

// TestVerifyTruncatedWholeRecords: cutting whole records off the end
// leaves a valid chain; the report says the ledger was not closed.
func TestVerifyTruncatedWholeRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	writeLedger(t, path, 10)
	ls := lines(t, path)
	writeLines(t, path, ls[:5])
	r := verify(t, nil, path)
	if r.Break != nil || r.Closed || len(r.Notes) == 0 || !strings.Contains(strings.Join(r.Notes, "\n"), "does not end with ledger_close") {
		t.Errorf("report = %+v, want an intact but unclosed ledger, said so", r)
	}
}

func newKey(t *testing.T) (*ledger.Signer, ed25519.PublicKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return ledger.NewSigner(priv), pub
}

func TestRotatedSignedLedgerVerifiesAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	signer, pub := newKey(t)
	writeLedger(t, path, 200, events.WithLedgerRotation(events.LedgerRotation{MaxBytes: 8 << 10}),
		events.WithLedgerSigner(signer, 25))
	files, _ := filepath.Glob(filepath.Join(dir, "audit*.jsonl"))
	if len(files) < 3 {
		t.Fatalf("want several files after rotation, got %v", files)
	}
	for _, f := range files {
		if st, _ := os.Stat(f); st.Size() > 8<<10 {
			t.Errorf("%s is %d bytes, over max_bytes", f, st.Size())
		}
	}
	// Given in any order.
	rev := append([]string(nil), files...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	r := verify(t, pub, rev...)
	if r.Break != nil {
		t.Fatal(r.Break)
	}
	if !r.Signed || r.SignedUpTo != r.Last.Seq-2 || len(r.Notes) != 0 || !r.Closed || r.Checkpoints < 8 {
		t.Errorf("report = %+v, want signed up to the close record", r)
	}

	t.Run("wrong key", func(t *testing.T) {
		_, other := newKey(t)
		r := verify(t, other, files...)
		if r.Break == nil || !strings.Contains(r.Break.Reason, "signature does not verify") {
			t.Fatalf("verify with another key: %v, want a signature failure", r.Break)
		}
	})
	t.Run("a file left out", func(t *testing.T) {
		without := append(append([]string(nil), files[:1]...), files[2:]...)
		r := verify(t, pub, without...)
		if r.Break == nil || !strings.Contains(r.Break.Reason, "deleted") {
			t.Fatalf("verify without %s: %v, want the gap named", files[1], r.Break)
		}
	})
	t.Run("one rotated file alone", func(t *testing.T) {
		r := verify(t, nil, files[1])
		if r.Break != nil || !strings.Contains(strings.Join(r.Notes, "\n"), "was not given") {
			t.Fatalf("report = %+v, want intact with a note on the unchecked first link", r)
		}
	})
}

func TestSignedCheckpointCatchesARewrittenChain(t *testing.T) {
	// Someone with write access edits a record and recomputes every hash
	// after it: the chain is whole again, the signature is not.
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	signer, pub := newKey(t)
	writeLedger(t, path, 10, events.WithLedgerSigner(signer, 100))
	ls := lines(t, path)
	ls = ls[:len(ls)-1]
	var rewritten [][]byte
	var link ledger.Link
	for i, l := range ls {
		body := l[:bytes.Index(l, []byte(`,"seq"`))]
		if i == 3 {
			body = bytes.Replace(body, []byte(`"tool":"t2"`), []byte(`"tool":"tX"`), 1)
		}
		if j := bytes.Index(body, []byte(`"upto_hash":"`)); j >= 0 {
			// The forger fixes the checkpoint's hash too; only the
			// signature is beyond them.
			j += len(`"upto_hash":"`)
			body = append(append(append([]byte(nil), body[:j]...), link.Hash...), body[j+64:]...)
		}
		out, next, err := ledger.Chain(append(body, "}\n"...), link)
		if err != nil {
			t.Fatal(err)
		}
		rewritten, link = append(rewritten, out), next
	}
	writeLines(t, path, rewritten)
	if r := verify(t, nil, path); r.Break != nil {
		t.Fatalf("without a key the rewritten chain is whole: %v", r.Break)
	}
	r := verify(t, pub, path)
	if r.Break == nil || !strings.Contains(r.Break.Reason, "signature does not verify") {
		t.Fatalf("with the key: %v, want the forged checkpoint named", r.Break)
	}
}

func TestOldUnchainedLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	old := `{"event":"tool_call_begin","server":"a","tool":"x"}` + "\n" + `{"event":"tool_call_end","server":"a","tool":"x"}` + "\n"
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ledger.Verify([]string{path}, nil); !errors.Is(err, ledger.ErrUnchained) {
		t.Fatalf("verify of an old log: %v, want ErrUnchained", err)
	}
	writeLedger(t, path, 3)
	r := verify(t, nil, path)
	if r.Break != nil || r.Unchained != 2 || !strings.Contains(strings.Join(r.Notes, "\n"), "predate the ledger") {
		t.Fatalf("report = %+v, want the old part noted and the ledger intact", r)
	}
	ls := lines(t, path)
	ls[0] = bytes.Replace(ls[0], []byte(`"x"`), []byte(`"y"`), 1)
	writeLines(t, path, ls)
	wantBreak(t, verify(t, nil, path), 3, "were changed")
}

func TestCrashFragmentIsDeclaredOnReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	writeLedger(t, path, 3)
	ls := lines(t, path)
	// A host killed mid-write: half a record, no newline.
	ls = append(ls[:len(ls)-1], []byte(`{"event":"tool_call_begin","call_id":"c9","ser`))
	writeLines(t, path, ls)
	wantBreak(t, verify(t, nil, path), 6, "cut short")
	writeLedger(t, path, 2)
	r := verify(t, nil, path)
	if r.Break != nil {
		t.Fatalf("after reopening: %v, want the fragment declared and the chain whole", r.Break)
	}
}

func TestLoadSignerNeverShowsTheKey(t *testing.T) {
	const secret = "c2VjcmV0LXNlY3JldC1zZWNyZXQ=" // base64, but not a 32-byte seed
	_, err := ledger.LoadSigner("", "KEY", func(string) (string, bool) { return secret, true })
	if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "KEY") {
		t.Fatalf("LoadSigner error = %v: want one naming the variable, not its value", err)
	}
	signer, _ := newKey(t)
	if s := fmt.Sprintf("%v %+v %#v", signer, signer, signer); !strings.Contains(s, signer.KeyID()) || strings.Contains(s, "PRIVATE") || len(s) > 200 {
		t.Errorf("a printed signer shows %q", s)
	}
}
