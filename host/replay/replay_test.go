package replay_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/replay"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func loadConfig(t *testing.T, src string) *config.Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.hcl")
	os.WriteFile(path, []byte(src), 0o600)
	return loadConfigFile(t, path)
}

func loadConfigFile(t testing.TB, path string) *config.Config {
	t.Helper()
	cfg, diags := config.Load(path, config.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return cfg
}

// record writes calls with their recorded decision, as the host does.
func record(t *testing.T, path string, calls []events.ApprovalDecision) {
	t.Helper()
	a, err := events.OpenAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range calls {
		a.Emit(events.ToolCallBegin{At: time.Now(), Call: d.Call, Arguments: []byte(`{}`)})
		a.Emit(d)
		a.Emit(events.ToolCallEnd{At: time.Now(), Call: d.Call, Status: events.CallCompleted})
	}
	a.Close()
}

func TestReplayClassifiesHumansAndLoosening(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	call := func(id string) events.Call { return events.Call{CallID: id, Server: "demo", Tool: "write_file"} }
	record(t, path, []events.ApprovalDecision{
		// A human allowed it: with nobody deciding in the candidate, it is
		// still put to a human: unchanged.
		{Call: call("human"), Step: string(approval.StepUser), By: "user", Verdict: events.VerdictApproved},
		// Allowed for the session earlier (a human did): unchanged.
		{Call: call("session"), Step: string(approval.StepSession), By: "host", Verdict: events.VerdictApproved},
		// A hook denied it; the candidate has no hook, so a human would be
		// asked: that loosens.
		{Call: call("hook"), Step: string(approval.StepHook), By: "policy", Verdict: events.VerdictDenied, Rationale: "no"},
		// Refused by the audit gate: not the approval chain's, not replayed.
		{Call: call("audit"), Step: string(approval.StepAudit), By: "host", Verdict: events.VerdictDenied},
	})
	r := replay.New(loadConfig(t, `server "demo" {
  command = "unused"
  default_tools_approval_mode = "prompt"
}`), replay.Options{})
	defer r.Close()
	res, err := r.Run(t.Context(), []string{path})
	if err != nil {
		t.Fatal(err)
	}
	if res.Replayed != 3 || res.Unchanged != 2 || len(res.Changed) != 1 || res.Loosened != 1 || res.Skipped["refused because the audit log could not be written"] != 1 {
		t.Fatalf("result = %+v", res)
	}
	c := res.Changed[0]
	if c.CallID != "hook" || c.Before.Class != replay.Deny || c.After.Class != replay.Ask {
		t.Errorf("change = %+v, want the hook's denial now put to a human", c)
	}

	// Mode approve in the candidate: every call is allowed by the mode.
	r2 := replay.New(loadConfig(t, `server "demo" {
  command = "unused"
  default_tools_approval_mode = "approve"
}`), replay.Options{})
	defer r2.Close()
	res, err = r2.Run(t.Context(), []string{path})
	if err != nil {
		t.Fatal(err)
	}
	if res.Loosened != 3 || res.Changed[0].After.Step != approval.StepMode {
		t.Errorf("approve mode: %+v", res)
	}
}
