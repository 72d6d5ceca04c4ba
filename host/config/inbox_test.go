package config

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLoadInbox(t *testing.T) {
	cfg, _ := mustLoad(t, `
approval {
  inbox {
    mode              = "retry"
    timeout           = "2m"
    url               = "https://toolgate.example.com/"
    approvers         = ["group:ops", "sub:alice"]
    separate_approver = true
    route {
      servers = ["github"]
      tools   = ["github/create_release"]
      to      = "inbox"
      mode    = "hold"
    }
    notify {
      url     = "https://hooks.example.com/T0"
      headers = { Authorization = "Bearer x" }
    }
  }
}
`, nil)
	want := &Inbox{
		Mode: InboxRetry, Timeout: 2 * time.Minute, Expiry: DefaultInboxExpiry, URL: "https://toolgate.example.com",
		Approvers: []string{"group:ops", "sub:alice"}, SeparateApprover: true,
		Routes: []InboxRoute{{Servers: []string{"github"}, Tools: []string{"github/create_release"}, To: RouteInbox, Mode: InboxHold}},
		Notify: &InboxNotify{URL: "https://hooks.example.com/T0", Headers: map[string]string{"Authorization": "Bearer x"}},
	}
	if d := cmp.Diff(want, cfg.Approval.Inbox); d != "" {
		t.Errorf("inbox (-want +got):\n%s", d)
	}
	if cfg, _ := mustLoad(t, "approval {\n  inbox {}\n}\n", nil); cfg.Approval.Inbox == nil || cfg.Approval.Inbox.Mode != InboxHold || cfg.Approval.Inbox.Timeout != DefaultInboxTimeout {
		t.Errorf("an empty inbox block: %+v", cfg.Approval.Inbox)
	}
	if cfg, _ := mustLoad(t, ``, nil); cfg.Approval.Inbox != nil {
		t.Error("no inbox block, but an inbox")
	}
}

func TestLoadInboxDiagnostics(t *testing.T) {
	_, diags, _ := loadString(t, `approval {
  inbox {
    mode      = "later"
    approvers = ["alice"]
    url       = "toolgate.example.com"
    notify {}
    route { to = "slack" }
  }
}
`, nil)
	checkDiags(t, diags, []wantDiag{
		{summary: "Invalid", detail: "hold", line: 3},
		{summary: "Invalid principal", detail: `"sub:<subject>"`, line: 4},
		{summary: "Invalid inbox url", detail: "http(s) base URL", line: 5},
		{summary: "Missing notify url", detail: "webhook", line: 6},
		{summary: "Invalid", detail: "inbox", line: 7},
	})
}
