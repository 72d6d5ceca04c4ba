package inbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/host/config"
)

// HTTPDoer sends the webhook's requests (an *http.Client).
type HTTPDoer interface {
	Do(*http.Request) (*http.Response, error)
}

// Webhook delivery: attempts per notification, the first backoff
// (doubled each time) and how many notifications may wait.
const (
	notifyAttempts = 4
	notifyBackoff  = 500 * time.Millisecond
	notifyQueue    = 128
)

// Notification is the JSON body posted for each new pending approval.
// Text is Slack-compatible (incoming webhooks show it as the message).
type Notification struct {
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Link      string          `json:"link"`
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Caller    string          `json:"caller,omitempty"`
	Arguments json.RawMessage `json:"arguments"`
	Mode      string          `json:"mode"`
	Expires   time.Time       `json:"expires"`
}

func notification(a Approval) Notification {
	who := "a caller"
	if a.Caller != nil && a.Caller.Name() != "" {
		who = a.Caller.Name()
	}
	return Notification{
		Text: fmt.Sprintf("toolgate: %s wants to run %s on server %s — approve or deny at %s (or: toolgate approve %s)",
			who, a.Tool, a.Server, a.Link, a.ID),
		ID: a.ID, Link: a.Link, Server: a.Server, Tool: a.Tool, Caller: a.Caller.Name(),
		Arguments: a.Arguments, Mode: string(a.Mode), Expires: a.Expires,
	}
}

type notice struct {
	to   config.InboxNotify
	body []byte
}

// notifier posts notifications on a goroutine of its own: a post never
// waits for the webhook, and a full queue drops (and logs) a notice
// rather than hold a call.
type notifier struct {
	client HTTPDoer
	log    hclog.Logger
	queue  chan notice
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

func newNotifier(client HTTPDoer, log hclog.Logger) *notifier {
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := &notifier{client: client, log: log, queue: make(chan notice, notifyQueue), ctx: ctx, cancel: cancel}
	n.wg.Add(1)
	go n.run()
	return n
}

func (n *notifier) post(to *config.InboxNotify, v Notification) {
	body, err := json.Marshal(v)
	if err != nil {
		return
	}
	select {
	case n.queue <- notice{to: *to, body: body}:
	default:
		n.log.Warn("webhook queue full; dropping a notification", "approval_id", v.ID)
	}
}

func (n *notifier) close() {
	n.once.Do(func() {
		n.cancel()
		n.wg.Wait()
	})
}

func (n *notifier) run() {
	defer n.wg.Done()
	for {
		select {
		case <-n.ctx.Done():
			return
		case no := <-n.queue:
			n.deliver(no)
		}
	}
}

// deliver posts one notice, retrying failures with backoff. The log
// names neither the URL (a Slack webhook URL is itself a credential)
// nor the headers.
func (n *notifier) deliver(no notice) {
	wait := notifyBackoff
	for attempt := 1; ; attempt++ {
		err := n.send(no)
		if err == nil {
			return
		}
		if attempt == notifyAttempts {
			n.log.Warn("webhook failed; giving up on this notification", "attempts", attempt, "error", err)
			return
		}
		n.log.Debug("webhook failed; retrying", "attempt", attempt, "error", err, "retry_in", wait)
		t := time.NewTimer(wait)
		select {
		case <-n.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait *= 2
	}
}

func (n *notifier) send(no notice) error {
	req, err := http.NewRequestWithContext(n.ctx, http.MethodPost, no.to.URL, bytes.NewReader(no.body))
	if err != nil {
		return errors.New("the notify url is not a valid URL")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "toolgate-inbox")
	for k, v := range no.to.Headers {
		req.Header.Set(k, v)
	}
	resp, err := n.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL
		}
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the webhook answered %s", resp.Status)
	}
	return nil
}
