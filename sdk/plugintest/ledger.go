package plugintest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/hook"
)

// LedgerCall is one tool call recorded in a toolgate audit ledger (the
// audit log: audit { path }), as a hook would have been asked about it.
type LedgerCall struct {
	File string
	Line int    // of its tool_call_begin record
	Seq  uint64 // of its tool_call_begin record (0 in an old, unchained log)
	// Request is the call as a hook sees it, from the recorded server,
	// tool, arguments, annotations and caller. Fields the ledger does not
	// hold (the tool's description, the approval mode) are empty.
	Request hook.Request
	// Recorded is the decision the host made: "allow", "deny", or ""
	// when the ledger has none for the call (a built-in tool, a cut log).
	Recorded string
	// RecordedBy is who decided: the step and its decider, such as "hook
	// policy" or "user user".
	RecordedBy string
}

// ledgerRecord is the part of a ledger record LedgerCalls reads. The SDK
// does not import the host, so it reads the documented record fields
// itself (docs/approval.md, "Audit ledger").
type ledgerRecord struct {
	Event       string          `json:"event"`
	Seq         uint64          `json:"seq"`
	CallID      string          `json:"call_id"`
	SessionID   string          `json:"session_id"`
	Server      string          `json:"server"`
	Tool        string          `json:"tool"`
	ModelName   string          `json:"model_name"`
	Arguments   json.RawMessage `json:"arguments"`
	Annotations *struct {
		Title       string `json:"title"`
		ReadOnly    bool   `json:"readOnlyHint"`
		Destructive *bool  `json:"destructiveHint"`
		Idempotent  bool   `json:"idempotentHint"`
		OpenWorld   *bool  `json:"openWorldHint"`
	} `json:"annotations"`
	Caller *struct {
		Subject  string            `json:"subject"`
		Issuer   string            `json:"issuer"`
		ClientID string            `json:"client_id"`
		Email    string            `json:"email"`
		Groups   []string          `json:"groups"`
		Scopes   []string          `json:"scopes"`
		Claims   map[string]string `json:"claims"`
	} `json:"caller"`
	Step    string `json:"step"`
	By      string `json:"by"`
	Verdict string `json:"verdict"`
}

// LedgerCalls reads the tool calls of toolgate audit ledger files, in
// order: every tool_call_begin with its arguments, and the first
// approval decision recorded for it. Lines that are not records are
// skipped. It fails t when a file cannot be read.
func LedgerCalls(t testing.TB, files ...string) []LedgerCall {
	t.Helper()
	var calls []LedgerCall
	for _, name := range files {
		got, err := readLedger(name)
		if err != nil {
			t.Fatalf("plugintest: read ledger: %v", err)
		}
		calls = append(calls, got...)
	}
	return calls
}

func readLedger(name string) ([]LedgerCall, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var calls []LedgerCall
	open := map[string]int{} // call id → index in calls, until decided
	r := bufio.NewReaderSize(f, 1<<20)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var rec ledgerRecord
			if json.Unmarshal(line, &rec) == nil {
				switch rec.Event {
				case "tool_call_begin":
					if rec.CallID != "" {
						open[rec.CallID] = len(calls)
						calls = append(calls, LedgerCall{File: name, Line: n, Seq: rec.Seq, Request: request(rec)})
					}
				case "approval_decision":
					if i, ok := open[rec.CallID]; ok && rec.Verdict != "abstain" {
						delete(open, rec.CallID)
						calls[i].Recorded = map[string]string{"approved": "allow", "denied": "deny"}[rec.Verdict]
						calls[i].RecordedBy = rec.Step + " " + rec.By
					}
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return calls, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
}

func request(rec ledgerRecord) hook.Request {
	req := hook.Request{Server: rec.Server, Tool: rec.Tool, ModelName: rec.ModelName, Arguments: rec.Arguments,
		SessionID: rec.SessionID, CallID: rec.CallID}
	if len(req.Arguments) == 0 {
		req.Arguments = json.RawMessage(`{}`)
	}
	if a := rec.Annotations; a != nil {
		req.Annotations = &sdk.Annotations{ReadOnly: a.ReadOnly, Destructive: a.Destructive, OpenWorld: a.OpenWorld,
			Idempotent: a.Idempotent, Title: a.Title}
		req.ToolTitle = a.Title
	}
	if c := rec.Caller; c != nil {
		req.Caller = &sdk.Caller{Subject: c.Subject, Issuer: c.Issuer, ClientID: c.ClientID, Email: c.Email,
			Groups: c.Groups, Scopes: c.Scopes, Claims: c.Claims}
	}
	return req
}

// PermissionReplay is a hook's answer to one recorded call.
type PermissionReplay struct {
	Call   LedgerCall
	Result hook.PermissionResult
	Err    error
}

// Changed reports whether the hook's answer contradicts the recorded
// decision: it denies what was allowed, or allows what was denied. No
// decision changes nothing (later steps decide).
func (p PermissionReplay) Changed() bool {
	switch p.Result.Decision {
	case hook.DecisionDeny:
		return p.Call.Recorded == "allow"
	case hook.DecisionAllow:
		return p.Call.Recorded == "deny"
	}
	return false
}

// ReplayPermission asks the hook's PermissionRequest about every call,
// in order, as the host would (nothing is executed), and returns its
// answers. Use it with [Hook] or [RunBinary] and [LedgerCalls] to run a
// hook against last week's real traffic in a test:
//
//	calls := plugintest.LedgerCalls(t, "testdata/audit.jsonl")
//	for _, r := range plugintest.ReplayPermission(t, plugintest.Hook(t, myHook{}), calls) {
//		if r.Changed() { t.Logf("seq %d %s: %s → %s", r.Call.Seq, r.Call.Request.Tool, r.Call.Recorded, r.Result.Decision) }
//	}
func ReplayPermission(t testing.TB, c *hook.Client, calls []LedgerCall) []PermissionReplay {
	t.Helper()
	out := make([]PermissionReplay, len(calls))
	for i, call := range calls {
		res, err := c.PermissionRequest(t.Context(), call.Request)
		out[i] = PermissionReplay{Call: call, Result: res, Err: err}
	}
	return out
}
