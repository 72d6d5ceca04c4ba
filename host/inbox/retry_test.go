package inbox_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/host/cli"
	"github.com/toolgate/toolgate/host/inbox"
	"github.com/toolgate/toolgate/internal/testbin"
)

// TestRetryModeWithTheCLIAndAWebhook is an unattended agent behind a
// real toolgate serve in retry mode, with a static token on loopback: a
// call that needs a human fails at once naming its approval; the chat
// webhook gets the link; the user approves from the terminal
// (toolgate approvals / approve / deny); the same call made again runs,
// once; other arguments are not covered; a denial's reason reaches the
// agent; a second answer is refused.
func TestRetryModeWithTheCLIAndAWebhook(t *testing.T) {
	hooks := make(chan inbox.Notification, 8)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n inbox.Notification
		b, _ := io.ReadAll(r.Body)
		if r.Header.Get("X-Hook-Secret") != "s3cret" || json.Unmarshal(b, &n) != nil {
			http.Error(w, "bad hook", http.StatusBadRequest)
			return
		}
		hooks <- n
	}))
	defer recv.Close()

	root := t.TempDir()
	s := startServe(t, `
serve { token_env_var = "INBOX_TEST_TOKEN" }
approval {
  inbox {
    mode = "retry"
    notify {
      url     = "`+recv.URL+`/hooks/T000/B000"
      headers = { "X-Hook-Secret" = "s3cret" }
    }
  }
}
server "demo" {
  command = "`+testbin.Path(t, "mcp-demo")+`"
  args    = ["--root", "`+root+`"]
  tool "write_file" { approval_mode = "prompt" }
}
`, "INBOX_TEST_TOKEN=tok-123")
	ag := connect(t, s.base, "tok-123")
	ctx := t.Context()
	argsA := map[string]any{"path": "a.txt", "content": "A"}
	argsB := map[string]any{"path": "b.txt", "content": "B"}

	r := wait(t, ag.call(ctx, "mcp__demo__write_file", argsA))
	idA := approvalID.FindString(r.text)
	if !r.isError || idA == "" || !strings.Contains(r.text, s.base+"/approvals/"+idA) || !strings.Contains(r.text, "same arguments") {
		t.Fatalf("the first call should fail naming its approval and link: %+v", r)
	}
	select {
	case n := <-hooks:
		if n.ID != idA || n.Link != s.base+"/approvals/"+idA || !strings.Contains(n.Text, n.Link) || n.Tool != "write_file" {
			t.Errorf("webhook: %+v", n)
		}
	case <-time.After(time.Minute):
		t.Fatal("no webhook within a minute")
	}
	if strings.Contains(s.stderr.String(), "s3cret") || strings.Contains(s.stderr.String(), "/hooks/T000") {
		t.Error("the webhook's secret header or URL reached the log")
	}

	env := func(k string) (string, bool) {
		switch k {
		case "TOOLGATE_URL":
			return s.base, true
		case "TOOLGATE_APPROVER_TOKEN":
			return "tok-123", true
		case "TOOLGATE_CONFIG", "XDG_CONFIG_HOME":
			return "", false
		}
		return os.LookupEnv(k)
	}
	toolgate := func(args ...string) (int, string) {
		var out, errOut strings.Builder
		code := cli.Run(ctx, args, cli.IO{In: strings.NewReader(""), Out: &out, Err: &errOut, LookupEnv: env})
		return code, out.String() + errOut.String()
	}
	if code, out := toolgate("approvals"); code != cli.ExitOK || !strings.Contains(out, idA) || !strings.Contains(out, "a.txt") {
		t.Fatalf("toolgate approvals: %d %s", code, out)
	}
	if code, out := toolgate("approve", idA); code != cli.ExitOK || !strings.Contains(out, idA+": approved") {
		t.Fatalf("toolgate approve: %d %s", code, out)
	}

	// Other arguments: not covered, a new approval.
	r = wait(t, ag.call(ctx, "mcp__demo__write_file", argsB))
	idB := approvalID.FindString(r.text)
	if !r.isError || idB == "" || idB == idA {
		t.Fatalf("a call with other arguments ran or reused the approval: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(root, "b.txt")); err == nil {
		t.Fatal("b.txt was written without approval")
	}
	// The same call again: runs once.
	r = wait(t, ag.call(ctx, "mcp__demo__write_file", argsA))
	if r.isError {
		t.Fatalf("the approved call did not run: %s", r.text)
	}
	if b, err := os.ReadFile(filepath.Join(root, "a.txt")); err != nil || string(b) != "A" {
		t.Fatalf("a.txt: %q %v", b, err)
	}
	r = wait(t, ag.call(ctx, "mcp__demo__write_file", argsA))
	if !r.isError || approvalID.FindString(r.text) == idA {
		t.Fatalf("an approval ran a second call: %+v", r)
	}

	if code, out := toolgate("deny", idB, "--reason", "b.txt is not yours"); code != cli.ExitOK || !strings.Contains(out, "denied") {
		t.Fatalf("toolgate deny: %d %s", code, out)
	}
	r = wait(t, ag.call(ctx, "mcp__demo__write_file", argsB))
	if !r.isError || !strings.Contains(r.text, "b.txt is not yours") {
		t.Fatalf("the denial's reason did not reach the agent: %+v", r)
	}
	if code, out := toolgate("approve", idB); code == cli.ExitOK || !strings.Contains(out, "already denied") {
		t.Fatalf("approving a denied approval: %d %s", code, out)
	}
	// Without the token the API refuses.
	if code, _ := api(t, http.MethodGet, s.base+inbox.APIPath, "", ""); code != http.StatusUnauthorized {
		t.Errorf("the API without a token: %d", code)
	}
}
