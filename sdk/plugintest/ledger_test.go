package plugintest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/sdk/plugintest"
)

// TestReplayPermissionOverALedger runs the denyDeletes hook against a
// ledger written by toolgate's audit sink (testdata/ledger/audit.jsonl:
// read_file allowed by its annotations, delete_file allowed by the user,
// write_file and a delete denied by a policy hook).
func TestReplayPermissionOverALedger(t *testing.T) {
	calls := plugintest.LedgerCalls(t, "testdata/ledger/audit.jsonl")
	if len(calls) != 4 {
		t.Fatalf("got %d calls, want 4", len(calls))
	}
	first := calls[0]
	if first.Request.Tool != "read_file" || string(first.Request.Arguments) != `{"path":"notes.md"}` ||
		first.Request.Annotations == nil || !first.Request.Annotations.ReadOnly ||
		first.Request.Caller == nil || first.Request.Caller.Subject != "alice" || first.Recorded != "allow" || first.Seq == 0 {
		t.Errorf("first call = %+v", first)
	}
	var got []string
	for _, r := range plugintest.ReplayPermission(t, plugintest.Hook(t, denyDeletes{}), calls) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		got = append(got, fmt.Sprintf("%s %s→%s changed=%v", r.Call.Request.Tool, r.Call.Recorded, r.Result.Decision, r.Changed()))
	}
	want := []string{
		"read_file allow→none changed=false",
		"delete_file allow→deny changed=true", // the user allowed it; the hook would not
		"write_file deny→none changed=false",
		"delete_file deny→deny changed=false",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("replay:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
