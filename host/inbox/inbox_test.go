package inbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/identity"
	"github.com/toolgate/toolgate/host/inbox"
)

var (
	alice = &identity.Caller{Subject: "alice", Issuer: "https://idp.test", Groups: []string{"dev"}}
	bob   = &identity.Caller{Subject: "bob", Issuer: "https://idp.test", Groups: []string{"ops"}}
)

func prompt(args string, caller *identity.Caller) approval.Prompt {
	return approval.Prompt{
		Request: approval.Request{
			CallID: "call-" + args, SessionID: "s1", Server: "demo", Tool: "delete_file", ModelName: "mcp__demo__delete_file",
			Arguments: json.RawMessage(args), Description: "Delete a file.", Caller: caller,
			Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true)},
		},
		Mode:    config.ModeAuto,
		Choices: []approval.Choice{approval.ChoiceAllow, approval.ChoiceAllowSession, approval.ChoiceDecline, approval.ChoiceCancel},
	}
}

func newInbox(t *testing.T, c *config.Inbox, opts inbox.Options) (*inbox.Inbox, *events.Recorder) {
	t.Helper()
	in := inbox.New(opts)
	t.Cleanup(in.Close)
	rec := &events.Recorder{}
	in.Attach(func() *config.Inbox { return c }, rec)
	in.SetBaseURL("http://127.0.0.1:8931")
	return in, rec
}

func denialText(t *testing.T, err error) string {
	t.Helper()
	var d *approval.AskerDenial
	if !errors.As(err, &d) {
		t.Fatalf("want an AskerDenial, got %v", err)
	}
	return d.Text
}

func pendingID(t *testing.T, in *inbox.Inbox) string {
	t.Helper()
	for _, a := range in.List() {
		if a.Status == inbox.StatusPending {
			return a.ID
		}
	}
	t.Fatal("no pending approval")
	return ""
}

// TestRetryMode is a client that cannot wait: the first call is answered
// at once with the approval's id and link, the same call made again after
// approval runs once, and other arguments are not covered.
func TestRetryMode(t *testing.T) {
	in, rec := newInbox(t, &config.Inbox{Mode: config.InboxRetry, Timeout: time.Minute, Expiry: time.Hour}, inbox.Options{})
	ctx := t.Context()
	p := prompt(`{"path":"a.txt"}`, alice)

	_, err := in.Ask(ctx, p, nil)
	text := denialText(t, err)
	id := pendingID(t, in)
	for _, want := range []string{id, "http://127.0.0.1:8931/approvals/" + id, "same arguments", "toolgate approve " + id} {
		if !strings.Contains(text, want) {
			t.Errorf("retry text lacks %q:\n%s", want, text)
		}
	}
	// Asked again before anyone answered: the same approval, no new one.
	if _, err := in.Ask(ctx, p, nil); !strings.Contains(denialText(t, err), id) {
		t.Errorf("a second call before the answer should name %s", id)
	}
	if n := len(in.List()); n != 1 {
		t.Errorf("%d approvals, want 1", n)
	}
	if _, err := in.Answer(id, inbox.Approver{Name: "bob", Caller: bob}, true, inbox.ScopeOnce, ""); err != nil {
		t.Fatal(err)
	}
	// Key order and blanks do not matter; other values do.
	if _, err := in.Ask(ctx, prompt(`{"path":"b.txt"}`, alice), nil); err == nil {
		t.Fatal("a call with other arguments ran on the approval of another")
	}
	if _, err := in.Ask(ctx, prompt(`{"path":"a.txt"}`, bob), nil); err == nil {
		t.Fatal("another caller's identical call ran on alice's approval")
	}
	choice, err := in.Ask(ctx, prompt(` { "path" : "a.txt" } `, alice), nil)
	if err != nil || choice != approval.ChoiceAllow {
		t.Fatalf("the approved call again: %v %v", choice, err)
	}
	// Single-use: once more needs a new approval.
	if _, err := in.Ask(ctx, p, nil); err == nil {
		t.Fatal("an approval ran a second call")
	}
	var actions []string
	for _, e := range events.Of[events.HeldApproval](rec) {
		if e.ApprovalID == id {
			actions = append(actions, e.Action)
			if e.Action == events.HeldApproved && (e.Approver != "bob" || e.Binding == "" || e.ApproverCaller.Subject != "bob") {
				t.Errorf("approval audit record: %+v", e)
			}
		}
	}
	if got := strings.Join(actions, ","); got != "pending,approved,used" {
		t.Errorf("audit of %s: %s", id, got)
	}
}

// TestHoldMode is a held call: it reports where it waits, and ends with
// the approver's answer; a second answer to the same id is refused.
func TestHoldMode(t *testing.T) {
	for _, approve := range []bool{true, false} {
		in, _ := newInbox(t, &config.Inbox{Mode: config.InboxHold, Timeout: time.Hour, Expiry: time.Hour}, inbox.Options{})
		progress := make(chan string, 16)
		type result struct {
			c   approval.Choice
			err error
		}
		done := make(chan result, 1)
		go func() {
			c, err := in.Ask(t.Context(), prompt(`{"path":"x"}`, alice), func(m string) { progress <- m })
			done <- result{c, err}
		}()
		msg := <-progress
		id := pendingID(t, in)
		if !strings.Contains(msg, "waiting for approval: http://127.0.0.1:8931/approvals/"+id) {
			t.Errorf("progress message: %q", msg)
		}
		if _, err := in.Answer(id, inbox.Approver{Name: "bob", Caller: bob}, approve, inbox.ScopeSession, "not today"); err != nil {
			t.Fatal(err)
		}
		r := <-done
		if approve {
			if r.err != nil || r.c != approval.ChoiceAllowSession {
				t.Errorf("approved for the session: %v %v", r.c, r.err)
			}
		} else if text := denialText(t, r.err); !strings.Contains(text, "not today") || !strings.Contains(text, "bob") {
			t.Errorf("denial text: %s", text)
		}
		_, err := in.Answer(id, inbox.Approver{Name: "bob", Caller: bob}, true, inbox.ScopeOnce, "")
		if !errors.Is(err, inbox.ErrAnswered) {
			t.Errorf("second answer: %v", err)
		}
	}
}

// TestHoldTimeout: nobody answers; the call is denied with a text that
// says so and where to approve next time.
func TestHoldTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in, rec := newInbox(t, &config.Inbox{Mode: config.InboxHold, Timeout: 5 * time.Minute, Expiry: time.Hour}, inbox.Options{Heartbeat: 2 * time.Minute})
		var beats int
		_, err := in.Ask(t.Context(), prompt(`{}`, alice), func(string) { beats++ })
		text := denialText(t, err)
		if !strings.Contains(text, "nobody answered") || !strings.Contains(text, "http://127.0.0.1:8931/approvals") {
			t.Errorf("timeout text: %s", text)
		}
		if beats != 3 { // at once, after 2 and after 4 minutes
			t.Errorf("%d progress reports in 5 minutes with a 2-minute heartbeat, want 3", beats)
		}
		if got := events.Of[events.HeldApproval](rec); len(got) != 2 || got[1].Action != events.HeldExpired {
			t.Errorf("audit: %+v", got)
		}
	})
}

// TestWhoMayApprove: approvers narrows who may answer, and
// separate_approver refuses one's own call; refusals are audited.
func TestWhoMayApprove(t *testing.T) {
	c := &config.Inbox{Mode: config.InboxRetry, Timeout: time.Minute, Expiry: time.Hour, Approvers: []string{"group:ops", "sub:alice"}, SeparateApprover: true}
	in, rec := newInbox(t, c, inbox.Options{})
	_, _ = in.Ask(t.Context(), prompt(`{}`, alice), nil)
	id := pendingID(t, in)
	if _, err := in.Answer(id, inbox.Approver{Name: "token holder"}, true, "", ""); !errors.Is(err, inbox.ErrNotApprover) {
		t.Errorf("static token with approvers set: %v", err)
	}
	if _, err := in.Answer(id, inbox.Approver{Name: "alice", Caller: alice}, true, "", ""); !errors.Is(err, inbox.ErrOwnCall) {
		t.Errorf("alice approving her own call: %v", err)
	}
	if _, err := in.Answer(id, inbox.Approver{Name: "bob", Caller: bob}, true, "", ""); err != nil {
		t.Errorf("bob (group ops): %v", err)
	}
	refused := 0
	for _, e := range events.Of[events.HeldApproval](rec) {
		if e.Action == events.HeldRefused {
			refused++
		}
	}
	if refused != 2 {
		t.Errorf("%d refusals audited, want 2", refused)
	}
}

func TestBindingCoversEveryPart(t *testing.T) {
	base := inbox.Binding("s", "t", "sha256:d", json.RawMessage(`{"a":1,"b":[1,2]}`), alice)
	if got := inbox.Binding("s", "t", "sha256:d", json.RawMessage(`{ "b":[1,2], "a":1 }`), alice); got != base {
		t.Error("the same arguments in another key order bind differently")
	}
	for name, b := range map[string]string{
		"server":     inbox.Binding("s2", "t", "sha256:d", json.RawMessage(`{"a":1,"b":[1,2]}`), alice),
		"tool":       inbox.Binding("s", "t2", "sha256:d", json.RawMessage(`{"a":1,"b":[1,2]}`), alice),
		"definition": inbox.Binding("s", "t", "sha256:e", json.RawMessage(`{"a":1,"b":[1,2]}`), alice),
		"arguments":  inbox.Binding("s", "t", "sha256:d", json.RawMessage(`{"a":1,"b":[2,1]}`), alice),
		"caller":     inbox.Binding("s", "t", "sha256:d", json.RawMessage(`{"a":1,"b":[1,2]}`), bob),
	} {
		if b == base {
			t.Errorf("a different %s binds alike", name)
		}
	}
}

func TestRedact(t *testing.T) {
	got := string(inbox.Redact(json.RawMessage(`{"path":"a","api_key":"k1","nested":{"password":"p","note":"Bearer abc"},"list":["ghp_123","ok"]}`)))
	want := `{"api_key":"[redacted]","list":["[redacted]","ok"],"nested":{"note":"[redacted]","password":"[redacted]"},"path":"a"}`
	if got != want {
		t.Errorf("redacted:\n got %s\nwant %s", got, want)
	}
}

// TestWebhook: each new pending approval is posted with its link and a
// Slack-compatible text and the configured headers; a failing webhook is
// retried; a hanging one delays no call.
func TestWebhook(t *testing.T) {
	var (
		mu    sync.Mutex
		fails = 2
	)
	got := make(chan *http.Request, 8)
	bodies := make(chan []byte, 8)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if fails > 0 {
			fails--
			http.Error(w, "try later", http.StatusServiceUnavailable)
			return
		}
		got <- r
		bodies <- b
	}))
	defer recv.Close()
	c := &config.Inbox{Mode: config.InboxRetry, Timeout: time.Minute, Expiry: time.Hour,
		Notify: &config.InboxNotify{URL: recv.URL + "/hook/SECRET", Headers: map[string]string{"Authorization": "Bearer hook-secret"}}}
	in, _ := newInbox(t, c, inbox.Options{})
	_, _ = in.Ask(t.Context(), prompt(`{"path":"a"}`, alice), nil)
	id := pendingID(t, in)
	r := <-got
	var n inbox.Notification
	if err := json.Unmarshal(<-bodies, &n); err != nil {
		t.Fatal(err)
	}
	if r.Header.Get("Authorization") != "Bearer hook-secret" || n.ID != id || !strings.Contains(n.Text, n.Link) || !strings.HasSuffix(n.Link, "/approvals/"+id) {
		t.Errorf("webhook: %v %+v", r.Header, n)
	}
}

func TestWebhookNeverDelaysTheCall(t *testing.T) {
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	defer close(release)
	c := &config.Inbox{Mode: config.InboxRetry, Timeout: time.Minute, Expiry: time.Hour, Notify: &config.InboxNotify{URL: hang.URL}}
	in, _ := newInbox(t, c, inbox.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	for i := range 200 { // more than the queue holds
		if _, err := in.Ask(ctx, prompt(`{"n":`+string(rune('0'+i%10))+`,"i":"`+strings.Repeat("x", i)+`"}`, alice), nil); err == nil {
			t.Fatal("a held call ran")
		}
	}
	if ctx.Err() != nil {
		t.Fatal("holding calls waited for the webhook")
	}
	in.Close() // ends the sender while the post hangs
}
