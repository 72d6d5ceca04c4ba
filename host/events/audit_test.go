package events

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/host/ledger"
	"github.com/toolgate/toolgate/internal/procwatch"
)

func openTestAudit(t *testing.T, path string, opts ...AuditOption) *AuditSink {
	t.Helper()
	a, err := OpenAudit(path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// chainSuffix is what the ledger adds to every record (host/ledger owns
// and tests the chain; these tests are about the events).
var chainSuffix = regexp.MustCompile(`,"seq":[0-9]+,"prev":"[0-9a-f]{64}"}$`)

// eventLines returns the file's lines without the ledger's own records
// and without the chain fields.
func eventLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if strings.Contains(l, `"event":"ledger_`) {
			continue
		}
		out = append(out, chainSuffix.ReplaceAllString(l, "}"))
	}
	return out
}

// auditLines splits the file into newline-terminated lines, parses each
// (leaving out the ledger's own records and the chain fields), and
// returns the unterminated tail separately.
func auditLines(t *testing.T, path string) (records []map[string]any, tail string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return records, string(data)
		}
		var rec map[string]any
		if err := json.Unmarshal(data[:i], &rec); err != nil {
			t.Fatalf("audit line %d is not a whole JSON record: %v\n%.200s", len(records)+1, err, data[:i])
		}
		if ev, _ := rec["event"].(string); !strings.HasPrefix(ev, "ledger_") {
			delete(rec, "seq")
			delete(rec, "prev")
			records = append(records, rec)
		}
		data = data[i+1:]
	}
	return records, ""
}

func TestAuditRecordFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a := openTestAudit(t, path)
	at := time.Date(2026, 8, 17, 12, 0, 0, 0, time.UTC)
	a.Emit(ToolCallEnd{At: at, Call: testCall, Status: CallCompleted, Duration: 1500 * time.Millisecond,
		Result: json.RawMessage(`{"content":[{"type":"text","text":"a<b"}]}`)})
	a.Emit(StartupComplete{At: at, Ready: []string{"a"}})
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	lines := eventLines(t, path)
	want := []string{
		`{"event":"tool_call_end","at":"2026-08-17T12:00:00Z","call_id":"c1","session_id":"s1","server":"files","tool":"write_file","model_name":"mcp__files__write_file","status":"completed","duration_ns":1500000000,"result":{"content":[{"type":"text","text":"a<b"}]}}`,
		`{"event":"startup_complete","at":"2026-08-17T12:00:00Z","ready":["a"],"failed":null,"cancelled":null}`,
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("audit records (-want +got):\n%s", diff)
	}
	if a.WriteErrors() != 0 {
		t.Errorf("WriteErrors() = %d, want 0", a.WriteErrors())
	}
}

type textEvent string

func (textEvent) Kind() string { return "text" }

type emptyEvent struct{}

func (emptyEvent) Kind() string { return "empty" }

func TestAuditOddEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var logs bytes.Buffer
	a := openTestAudit(t, path, WithAuditLogger(hclog.New(&hclog.LoggerOptions{Output: &logs})))
	a.Emit(textEvent("hello"))
	a.Emit(emptyEvent{})
	a.Emit(ToolCallEnd{Call: testCall, Status: CallCompleted, Result: json.RawMessage(`{not json`)})
	a.Close()

	records, tail := auditLines(t, path)
	if tail != "" {
		t.Fatalf("unterminated tail %q", tail)
	}
	if len(records) != 3 {
		t.Fatalf("got %d records, want 3: %v", len(records), records)
	}
	if diff := cmp.Diff(map[string]any{"event": "text", "data": "hello"}, records[0]); diff != "" {
		t.Errorf("non-object event (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"event": "empty"}, records[1]); diff != "" {
		t.Errorf("empty event (-want +got):\n%s", diff)
	}
	if records[2]["event"] != "tool_call_end" || records[2]["encode_error"] == nil {
		t.Errorf("an unencodable event must still be recorded by kind with its error: %v", records[2])
	}
	if a.WriteErrors() != 1 {
		t.Errorf("WriteErrors() = %d, want 1 (the unencodable event)", a.WriteErrors())
	}
}

func TestAuditFileModeAndAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a := openTestAudit(t, path)
	a.Emit(startup("a", StatusReady))
	a.Close()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("audit log mode = %v, want 0600: it holds tool arguments", st.Mode().Perm())
	}

	b := openTestAudit(t, path)
	b.Emit(startup("b", StatusReady))
	b.Close()
	records, _ := auditLines(t, path)
	if len(records) != 2 || records[0]["server"] != "a" || records[1]["server"] != "b" {
		t.Errorf("reopening must append, got %v", records)
	}
}

func TestAuditEndsATornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	torn := `{"event":"server_startup","server":"a"}` + "\n" + `{"event":"tool_call_end","ser`
	if err := os.WriteFile(path, []byte(torn), 0o600); err != nil {
		t.Fatal(err)
	}
	a := openTestAudit(t, path)
	a.Emit(startup("b", StatusReady))
	a.Close()

	lines := eventLines(t, path)
	if len(lines) != 3 || lines[1] != `{"event":"tool_call_end","ser` {
		t.Fatalf("the torn line must stay on its own line, got %q", lines)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[2]), &rec); err != nil || rec["server"] != "b" {
		t.Errorf("the new record must be a whole line: %q (%v)", lines[2], err)
	}
}

func TestAuditConcurrentEmittersWriteWholeLines(t *testing.T) {
	const emitters, perEmitter = 8, 150
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a := openTestAudit(t, path)
	var wg sync.WaitGroup
	for i := range emitters {
		wg.Go(func() {
			for j := range perEmitter {
				// Sizes from a few bytes to several pages, so writes straddle
				// page boundaries.
				result := strings.Repeat("x", (i*perEmitter+j)*37%9000)
				a.Emit(ToolCallEnd{Call: Call{CallID: fmt.Sprintf("%d-%d", i, j)}, Status: CallCompleted,
					Result: json.RawMessage(strconv.Quote(result))})
			}
		})
	}
	wg.Wait()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	records, tail := auditLines(t, path)
	if tail != "" {
		t.Fatalf("unterminated tail of %d bytes", len(tail))
	}
	seen := make(map[string]bool)
	for _, r := range records {
		seen[r["call_id"].(string)] = true
	}
	if len(records) != emitters*perEmitter || len(seen) != emitters*perEmitter {
		t.Errorf("got %d records (%d distinct), want %d", len(records), len(seen), emitters*perEmitter)
	}
}

func TestAuditWriteErrorsAreCountedAndLoggedOnce(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("needs /dev/full to make writes fail")
	}
	var logs bytes.Buffer
	a, err := OpenAudit("/dev/full", WithAuditLogger(hclog.New(&hclog.LoggerOptions{Output: &logs})))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		a.Emit(startup("a", StatusReady)) // must not panic
	}
	if err := a.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	a.Emit(startup("a", StatusReady)) // after Close: counted too

	if got := a.WriteErrors(); got != 4 {
		t.Errorf("WriteErrors() = %d, want 4", got)
	}
	if n := strings.Count(logs.String(), "audit log failed"); n != 1 {
		t.Errorf("the failure must be logged exactly once, got %d times:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "no space left on device") {
		t.Errorf("the log must say why: %s", logs.String())
	}
}

func TestOpenAuditErrorNamesTheFix(t *testing.T) {
	_, err := OpenAudit(filepath.Join(t.TempDir(), "missing-dir", "audit.jsonl"))
	if err == nil || !strings.Contains(err.Error(), "audit_log") {
		t.Fatalf("OpenAudit error = %v, want one that points at audit_log", err)
	}
}

// Helper modes; see TestMain.
const (
	helperEmitThenKill    = "emit-then-sigkill"
	helperEmitUntilKilled = "emit-until-killed"
	helperEmitThenClose   = "emit-then-close"
	helperPathEnv         = "TOOLGATE_EVENTS_TEST_AUDIT"
	helperCountEnv        = "TOOLGATE_EVENTS_TEST_COUNT"
)

func helperRecord(i int) ToolCallEnd {
	// About two pages, so many records straddle a page boundary.
	return ToolCallEnd{Call: Call{CallID: strconv.Itoa(i)}, Status: CallCompleted,
		Result: json.RawMessage(strconv.Quote(strings.Repeat("r", 6000)))}
}

// emitThenKill emits N records, never closes the sink and dies by SIGKILL:
// every record whose Emit returned must be in the file.
func emitThenKill() {
	n, _ := strconv.Atoi(os.Getenv(helperCountEnv))
	a, err := OpenAudit(os.Getenv(helperPathEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	for i := range n {
		a.Emit(helperRecord(i))
	}
	_ = procwatch.Kill(os.Getpid())
	select {}
}

// emitThenClose emits N records to a ledger rotated every 64 KiB, as one
// of several processes writing it, and closes it.
func emitThenClose() {
	n, _ := strconv.Atoi(os.Getenv(helperCountEnv))
	a, err := OpenAudit(os.Getenv(helperPathEnv), WithLedgerRotation(LedgerRotation{MaxBytes: sharedLedgerRotation}))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	for i := range n {
		a.Emit(helperRecord(i))
	}
	if err := a.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(4)
	}
}

// emitUntilKilled emits from several goroutines and acknowledges each
// returned Emit on stdout, until the parent kills it.
func emitUntilKilled() {
	a, err := OpenAudit(os.Getenv(helperPathEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	var next atomic.Int64
	for range 4 {
		go func() {
			for {
				a.Emit(helperRecord(int(next.Add(1))))
				os.Stdout.Write([]byte("+\n"))
			}
		}()
	}
	select {}
}

func helperCmd(t *testing.T, mode, path string, extraEnv ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe)
	cmd.Env = append(os.Environ(), append([]string{helperEnv + "=" + mode, helperPathEnv + "=" + path}, extraEnv...)...)
	cmd.Stderr = os.Stderr
	return cmd
}

func TestAuditSurvivesSIGKILLAfterEmit(t *testing.T) {
	const n = 300
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	cmd := helperCmd(t, helperEmitThenKill, path, helperCountEnv+"="+strconv.Itoa(n))
	err := cmd.Run()
	if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !st.Signaled() || st.Signal() != syscall.SIGKILL {
		t.Fatalf("helper did not die by SIGKILL: %v", err)
	}
	records, tail := auditLines(t, path)
	if tail != "" {
		t.Errorf("unterminated tail of %d bytes", len(tail))
	}
	if len(records) != n {
		t.Fatalf("got %d complete records after SIGKILL, want %d", len(records), n)
	}
	for i, r := range records {
		if r["call_id"] != strconv.Itoa(i) {
			t.Fatalf("record %d has call_id %v", i, r["call_id"])
		}
	}
}

// TestAuditSIGKILLDuringEmission kills the host while records are being
// written. Every acknowledged record must be there, whole. Linux may cut
// the one write in flight at a page boundary when a fatal signal arrives,
// so an unterminated tail is allowed; the next OpenAudit must then keep it
// off the following record.
func TestAuditSIGKILLDuringEmission(t *testing.T) {
	const ackedBeforeKill = 500
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	cmd := helperCmd(t, helperEmitUntilKilled, path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := 0
	sc := bufio.NewScanner(stdout)
	for acked < ackedBeforeKill && sc.Scan() {
		acked++
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		acked++ // acknowledgements already in the pipe
	}
	cmd.Wait()
	if acked < ackedBeforeKill {
		t.Fatalf("helper stopped after %d records: %v", acked, sc.Err())
	}

	records, tail := auditLines(t, path)
	if len(records) < acked {
		t.Fatalf("got %d whole records, want at least the %d acknowledged", len(records), acked)
	}
	t.Logf("%d acknowledged, %d whole records, torn tail of %d bytes", acked, len(records), len(tail))

	a := openTestAudit(t, path)
	a.Emit(startup("after-restart", StatusReady))
	a.Close()
	lines := eventLines(t, path)
	last := []byte(lines[len(lines)-1])
	var rec map[string]any
	if err := json.Unmarshal(last, &rec); err != nil || rec["server"] != "after-restart" {
		t.Errorf("record after restart is not a whole line: %.100q (%v)", last, err)
	}
}

// TestAuditWritableFollowsTheLatestWrite: Writable reports the failure of
// the latest record and clears once a record is written again; a closed
// sink is never writable.
func TestAuditWritableFollowsTheLatestWrite(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("needs /dev/full to make writes fail")
	}
	a, err := OpenAudit("/dev/full")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Writable(); err != nil {
		t.Fatalf("before any write: %v", err)
	}
	a.Emit(startup("a", StatusReady))
	if err := a.Writable(); err == nil || !strings.Contains(err.Error(), "no space left on device") || !strings.Contains(err.Error(), "/dev/full") {
		t.Fatalf("after a failed write: %v, want the failure with the path", err)
	}
	// The disk has room again: swap in a regular file.
	f, err := os.OpenFile(filepath.Join(t.TempDir(), "audit.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	full := a.f
	a.f = f
	a.mu.Unlock()
	_ = full.Close()
	a.Emit(startup("a", StatusReady))
	if err := a.Writable(); err != nil {
		t.Fatalf("after a successful write: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Writable(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("after Close: %v, want os.ErrClosed", err)
	}
}

// TestLedgerRotatesByAge: a file older than max_age moves aside before
// the next record, and the new file continues the chain.
func TestLedgerRotatesByAge(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	a := openTestAudit(t, path, WithLedgerRotation(LedgerRotation{MaxAge: time.Hour}), withClock(clock))
	a.Emit(startup("a", StatusReady))
	now = now.Add(59 * time.Minute)
	a.Emit(startup("b", StatusReady))
	now = now.Add(2 * time.Minute)
	a.Emit(startup("c", StatusReady))
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "audit*.jsonl"))
	if len(files) != 2 {
		t.Fatalf("files = %v, want the rotated one and the current one", files)
	}
	rotated := filepath.Join(dir, "audit-20261201T100100.000000000Z.jsonl")
	old, _ := auditLines(t, rotated)
	cur, _ := auditLines(t, path)
	if len(old) != 2 || old[1]["server"] != "b" || len(cur) != 1 || cur[0]["server"] != "c" {
		t.Errorf("rotated = %v, current = %v", old, cur)
	}
	data, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(data), `{"at":"2026-12-01T10:01:00Z","event":"ledger_continue","previous":"audit-20261201T100100.000000000Z.jsonl","seq":5,`) {
		t.Errorf("the new file does not continue the chain:\n%s", data)
	}
}

const sharedLedgerRotation = 64 << 10

// TestProcessesShareOneLedger is toolgate serve and a toolgate call (or
// toolgate servers) on one configuration: several processes append to
// the same ledger at once, and rotate it, and the chain still verifies
// whole, with every record of every writer in it. Before the ledger's
// lock, the second writer chained from what it had last seen, and
// toolgate audit verify called the result reordered or duplicated.
func TestProcessesShareOneLedger(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	const perWriter = 60
	var cmds []*exec.Cmd
	for range 2 {
		cmd := helperCmd(t, helperEmitThenClose, path, helperCountEnv+"="+strconv.Itoa(perWriter))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	// And one writer in this process, beside them.
	a, err := OpenAudit(path, WithLedgerRotation(LedgerRotation{MaxBytes: sharedLedgerRotation}))
	if err != nil {
		t.Fatal(err)
	}
	for i := range perWriter {
		a.Emit(helperRecord(i))
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("a writer process: %v", err)
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("%d ledger files; the writers should have rotated it several times", len(files))
	}
	rep, err := ledger.Verify(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Break != nil {
		t.Fatalf("the ledger written by three processes is broken: %v", rep.Break)
	}
	ends := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ends += bytes.Count(data, []byte(`{"event":"tool_call_end"`))
	}
	if ends != 3*perWriter {
		t.Errorf("%d tool_call_end records in the ledger, want %d (every writer's)", ends, 3*perWriter)
	}
}
