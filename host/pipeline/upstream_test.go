package pipeline_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/execution"
	"github.com/toolgate/toolgate/host/pipeline"
)

// session is an Upstream that names itself.
type session struct{ name string }

func (s *session) AskApproval(context.Context, approval.Prompt) (approval.Choice, error) {
	return approval.ChoiceAllow, nil
}
func (s *session) Elicit(context.Context, approval.Elicitation) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: approval.ActionDecline}, nil
}
func (s *session) Sample(context.Context, string, *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	return nil, errors.New("no sampling")
}
func (s *session) Log(*mcp.LoggingMessageParams) {}
func (s *session) Progress() func(*mcp.ProgressNotificationParams) {
	return func(*mcp.ProgressNotificationParams) {}
}

// holding is an executor whose calls wait, inside the call, until
// released, after telling what the server's side finds with the call's
// context.
type holding struct {
	running *pipeline.Running
	entered chan found
	release chan struct{}
}

type found struct {
	own         pipeline.Upstream
	hasProgress bool
}

func (h *holding) Execute(ctx context.Context, r execution.Request) execution.Result {
	own, _ := h.running.For(ctx, r.Call.Server)
	h.entered <- found{own: own, hasProgress: r.OnProgress != nil}
	<-h.release
	return execution.Result{Status: events.CallCompleted, Raw: &mcp.CallToolResult{}}
}

// askers records the Asker each approval request carried.
type askers struct {
	*approver
	mu  sync.Mutex
	got []approval.Asker
}

func (a *askers) Decide(ctx context.Context, r approval.Request) approval.Decision {
	a.mu.Lock()
	a.got = append(a.got, r.Asker)
	a.mu.Unlock()
	return a.approver.Decide(ctx, r)
}

// PostToolUse is not counted: calls here run concurrently.
func (a *askers) PostToolUse(context.Context, approval.Request, approval.PostResult) []string {
	return nil
}

// TestRunningFindsTheSessionOfTheCall: what a server sends back during a
// call reaches the session of that call: by the call's context (a
// 2026-07-28 server asks inside its call), else as the one session with a
// call running on that server; calls of two sessions on one server are
// ambiguous, and after the calls nobody is found. The approval question
// goes to the request's own session.
func TestRunningFindsTheSessionOfTheCall(t *testing.T) {
	rn := &pipeline.Running{}
	ex := &holding{running: rn, entered: make(chan found), release: make(chan struct{})}
	dec := &askers{approver: &approver{}}
	p := pipeline.New(pipeline.Options{Approver: dec, Executor: ex, Running: rn})
	a, b := &session{"a"}, &session{"b"}
	var wg sync.WaitGroup
	call := func(sess string, up pipeline.Upstream) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.Do(t.Context(), pipeline.Request{Kind: pipeline.ToolCall, SessionID: sess, Server: "demo", Name: "echo", Upstream: up})
		}()
	}

	call("one", a)
	if got := <-ex.entered; got.own != a || !got.hasProgress {
		t.Errorf("inside a's call: %+v", got)
	}
	if up, why := rn.For(context.Background(), "demo"); up != a {
		t.Errorf("one call of session a running: found %v (%s)", up, why)
	}
	ex.release <- struct{}{}
	wg.Wait()

	call("one", a)
	call("two", b)
	got := []found{<-ex.entered, <-ex.entered}
	if got[0].own == got[1].own || got[0].own == nil || got[1].own == nil {
		t.Errorf("each call must find its own session: %+v", got)
	}
	if up, why := rn.For(context.Background(), "demo"); up != nil || !strings.Contains(why, "calls of 2 upstream sessions") {
		t.Errorf("two sessions on demo: found %v, why %q", up, why)
	}
	if n := len(rn.On("demo")); n != 2 {
		t.Errorf("log messages go to %d calls, want 2", n)
	}
	close(ex.release)
	wg.Wait()
	if up, why := rn.For(context.Background(), "demo"); up != nil || !strings.Contains(why, "outside any call") {
		t.Errorf("after the calls: found %v, why %q", up, why)
	}

	dec.mu.Lock()
	defer dec.mu.Unlock()
	if len(dec.got) != 3 {
		t.Fatalf("decided %d requests, want 3", len(dec.got))
	}
	for i, asker := range dec.got {
		if asker != a && asker != b {
			t.Errorf("request %d was decided with asker %v, not its session's", i, asker)
		}
	}
}
