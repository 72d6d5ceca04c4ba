package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/execution"
	"github.com/toolgate/toolgate/host/identity"
	"github.com/toolgate/toolgate/host/pipeline"
)

// server records every request that reached it.
type server struct {
	mu   sync.Mutex
	got  []string
	fail error
}

func (s *server) saw(what string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, what)
	return s.fail
}

func (s *server) Execute(_ context.Context, r execution.Request) execution.Result {
	if err := s.saw("tool " + r.Call.Tool); err != nil {
		return execution.Result{Status: events.CallFailed, Err: err, EventError: err.Error()}
	}
	return execution.Result{Status: events.CallCompleted, Raw: &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}}
}
func (s *server) ReadResource(_ context.Context, server, uri string) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{}, s.saw("read " + uri)
}
func (s *server) GetPrompt(_ context.Context, server, name string, _ map[string]string) (*mcp.GetPromptResult, error) {
	return &mcp.GetPromptResult{}, s.saw("prompt " + name)
}
func (s *server) Complete(_ context.Context, server string, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	return &mcp.CompleteResult{}, s.saw("complete " + p.Ref.Name)
}
func (s *server) Subscribe(_ context.Context, server, uri string) error {
	return s.saw("subscribe " + uri)
}
func (s *server) Unsubscribe(_ context.Context, server, uri string) error {
	return s.saw("unsubscribe " + uri)
}

// approver approves everything unless deny or block is set.
type approver struct {
	deny, block string
	post        int
	// blockRequests blocks resource reads and prompt gets with its text;
	// asked records what the request hooks saw.
	blockRequests string
	asked         []approval.Request
}

func (a *approver) preRequest(step approval.DecisionStep, r approval.Request) *approval.Decision {
	a.asked = append(a.asked, r)
	if a.blockRequests != "" {
		return &approval.Decision{Step: step, By: "policy", Text: a.blockRequests}
	}
	return nil
}
func (a *approver) PreResourceRead(_ context.Context, r approval.Request) *approval.Decision {
	return a.preRequest(approval.StepPreResourceRead, r)
}
func (a *approver) PrePromptGet(_ context.Context, r approval.Request) *approval.Decision {
	return a.preRequest(approval.StepPrePromptGet, r)
}

func (a *approver) PreToolUse(_ context.Context, r approval.Request, _ any) (approval.Request, *approval.Decision) {
	if a.block != "" {
		return r, &approval.Decision{Step: approval.StepPreToolUse, By: "hook", Text: a.block}
	}
	return r, nil
}
func (a *approver) Decide(context.Context, approval.Request) approval.Decision {
	if a.deny != "" {
		return approval.Decision{Step: approval.StepMode, By: "host", Text: a.deny}
	}
	return approval.Decision{Approved: true, Step: approval.StepMode, By: "host"}
}
func (a *approver) PostToolUse(context.Context, approval.Request, approval.PostResult) []string {
	a.post++
	return []string{"note"}
}

var kinds = []pipeline.Request{
	{Kind: pipeline.ToolCall, Server: "s", Name: "echo", ModelName: "s__echo", Tool: &mcp.Tool{Name: "echo"}},
	{Kind: pipeline.ResourceRead, Server: "s", URI: "demo://a", ModelName: "demo://a"},
	{Kind: pipeline.ResourceSubscribe, Server: "s", URI: "demo://a", ModelName: "demo://a"},
	{Kind: pipeline.PromptGet, Server: "s", Name: "greet", ModelName: "s__greet"},
	{Kind: pipeline.Completion, Server: "s", Name: "greet", ModelName: "s__greet",
		Complete: &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "greet"}, Argument: mcp.CompleteParamsArgument{Name: "name", Value: "x"}}},
	{Kind: pipeline.Completion, Server: "s", URI: "demo://item/{id}", ModelName: "demo://item/{id}",
		Complete: &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "demo://item/{id}"}, Argument: mcp.CompleteParamsArgument{Name: "id", Value: "1"}}},
}

// TestEveryKindBeginsAndEndsOnce: each kind that reaches a server is
// audited with exactly one begin and one end carrying the caller and its
// kind, whether it ran or a rate limit refused it; a refused request never
// reaches the server.
func TestEveryKindBeginsAndEndsOnce(t *testing.T) {
	caller := &identity.Caller{Subject: "alice"}
	for _, limited := range []bool{false, true} {
		for _, r := range kinds {
			name := string(r.Kind)
			if limited {
				name += "/limited"
			}
			t.Run(name, func(t *testing.T) {
				rec := &events.Recorder{}
				srv := &server{}
				opts := pipeline.Options{Approver: &approver{}, Executor: srv, Servers: srv, Events: rec}
				if limited {
					opts.Admit = func(c *identity.Caller, name string) error {
						return errors.New("rate limit for " + c.Subject + " on " + name + ": retry in 3s")
					}
				}
				ctx := identity.WithClient(identity.With(t.Context(), caller), &identity.Client{Name: "inspector", Version: "1.0"})
				ctx = events.WithTraceParent(ctx, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
				res := pipeline.New(opts).Do(ctx, r)
				begins, ends := events.Of[events.ToolCallBegin](rec), events.Of[events.ToolCallEnd](rec)
				if len(begins) != 1 || len(ends) != 1 {
					t.Fatalf("%d begin and %d end records, want one each: %v", len(begins), len(ends), rec.Events())
				}
				for _, c := range []events.Call{begins[0].Call, ends[0].Call} {
					if c.Caller.Key() != caller.Key() || c.Kind != string(r.Kind) || c.Server != "s" || c.CallID != res.ID ||
						c.Client == nil || c.Client.Name != "inspector" || c.TraceID != "0af7651916cd43dd8448eb211c80319c" {
						t.Errorf("record %+v lacks the caller, kind, server, id, client or trace id", c)
					}
				}
				wantStep := approval.StepAdmit
				if r.Kind == pipeline.ToolCall {
					wantStep = approval.StepMode
				}
				wantDecision := events.VerdictApproved
				if limited {
					wantStep, wantDecision = approval.StepRateLimit, events.VerdictDenied
				}
				if ends[0].Decision != wantDecision || approval.DecisionStep(ends[0].DecisionStep) != wantStep || ends[0].Duration < 0 {
					t.Errorf("end records decision %q by %q, want %q by %q", ends[0].Decision, ends[0].DecisionStep, wantDecision, wantStep)
				}
				if limited {
					want := "rate limit for alice on " + r.ModelName + ": retry in 3s"
					if res.Status != events.CallDenied || res.Err == nil || res.Err.Error() != want || ends[0].Error != want {
						t.Errorf("limited: status %s, err %v, end %+v; want denied with %q", res.Status, res.Err, ends[0], want)
					}
					if len(srv.got) != 0 {
						t.Errorf("a refused request reached the server: %v", srv.got)
					}
					return
				}
				if res.Status != events.CallCompleted || !res.Reached || len(srv.got) != 1 {
					t.Errorf("status %s reached %v, server got %v", res.Status, res.Reached, srv.got)
				}
			})
		}
	}
}

// TestToolCallStages: pre-hooks and the decision may refuse a tool call
// with their text, before the freshness hold and the server; an approved
// call holds its turn until after the post-hooks.
func TestToolCallStages(t *testing.T) {
	call := kinds[0]
	run := func(a *approver, hold func() (func(), error)) (pipeline.Result, *server, *events.Recorder) {
		rec := &events.Recorder{}
		srv := &server{}
		r := call
		r.Hold = hold
		return pipeline.New(pipeline.Options{Approver: a, Executor: srv, Servers: srv, Events: rec}).Do(t.Context(), r), srv, rec
	}
	noHold := func() (func(), error) { t.Error("a refused call took its turn"); return nil, nil }
	for _, a := range []*approver{{block: "blocked by policy"}, {deny: "denied by the user"}} {
		res, srv, rec := run(a, noHold)
		want := a.block + a.deny
		if res.Status != events.CallDenied || res.Decision.Text != want || !strings.Contains(res.Raw.Content[0].(*mcp.TextContent).Text, want) {
			t.Errorf("%+v: result %+v, want denied with %q", a, res, want)
		}
		if len(srv.got) != 0 || len(events.Of[events.ToolCallEnd](rec)) != 1 {
			t.Errorf("refused call: server got %v, events %v", srv.got, rec.Events())
		}
	}

	released := false
	a := &approver{}
	res, srv, _ := run(a, func() (func(), error) { return func() { released = true }, nil })
	if res.Status != events.CallCompleted || len(srv.got) != 1 || !released || a.post != 1 || len(res.Notes) != 1 {
		t.Errorf("approved call: %+v, server %v, released %v, post-hooks %d", res, srv.got, released, a.post)
	}

	res, srv, rec := run(&approver{}, func() (func(), error) { return func() {}, errors.New("catalog changed") })
	if res.Status != events.CallFailed || len(srv.got) != 0 || events.Of[events.ToolCallEnd](rec)[0].Error != "catalog changed" {
		t.Errorf("stale call: %+v, server %v", res, srv.got)
	}
}

// TestRequestHooksDenyReadsAndPrompts: the pre-hooks stage of every kind
// but tool calls asks the request hooks with the URI, the prompt's name
// and arguments and the caller: reads and subscriptions as reads, prompt
// gets as gets, a completion as a read of its resource template or a get
// of its prompt (with the argument completed); a block is a denial with
// the hook's text, recorded with its step, and the request never reaches
// the server.
func TestRequestHooksDenyReadsAndPrompts(t *testing.T) {
	caller := &identity.Caller{Subject: "alice"}
	for _, r := range kinds[1:] {
		t.Run(string(r.Kind), func(t *testing.T) {
			rec := &events.Recorder{}
			srv := &server{}
			a := &approver{blockRequests: "not for you"}
			r.PromptArguments = map[string]string{"name": "x"}
			res := pipeline.New(pipeline.Options{Approver: a, Executor: srv, Servers: srv, Events: rec}).Do(identity.With(t.Context(), caller), r)
			asPrompt := r.Name != ""
			if len(a.asked) != 1 || a.asked[0].Caller != caller || a.asked[0].URI != r.URI || a.asked[0].Tool != r.Name ||
				(asPrompt && a.asked[0].PromptArguments["name"] != "x") {
				t.Fatalf("hooks saw %+v", a.asked)
			}
			ends := events.Of[events.ToolCallEnd](rec)
			want := approval.StepPreResourceRead
			if asPrompt {
				want = approval.StepPrePromptGet
			}
			if res.Status != events.CallDenied || res.Err == nil || res.Err.Error() != "not for you" || len(srv.got) != 0 ||
				len(ends) != 1 || approval.DecisionStep(ends[0].DecisionStep) != want || ends[0].Decision != events.VerdictDenied {
				t.Errorf("result %+v, server got %v, end %+v", res, srv.got, ends)
			}
		})
	}
}

// TestForwardedRequests: a server's sampling or elicitation forwarded
// upstream is one request of the pipeline: its own check admits or
// refuses it (serve's limits do not count it), it is audited with one
// begin and one end carrying the caller and the forward's summary, and a
// refused one is never forwarded.
func TestForwardedRequests(t *testing.T) {
	caller := &identity.Caller{Subject: "alice"}
	for _, kind := range []pipeline.Kind{pipeline.Sampling, pipeline.Elicitation} {
		for _, why := range []string{"", "the client cannot sample"} {
			t.Run(string(kind)+"/"+why, func(t *testing.T) {
				rec := &events.Recorder{}
				forwarded := 0
				p := pipeline.New(pipeline.Options{Events: rec, Admit: func(*identity.Caller, string) error {
					t.Error("serve's limits were asked about a forwarded request")
					return nil
				}})
				res := p.Do(t.Context(), pipeline.Request{Kind: kind, Server: "s", ModelName: "s__echo", Caller: caller,
					Check: func() error {
						if why != "" {
							return errors.New(why)
						}
						return nil
					},
					Forward: func(context.Context) (json.RawMessage, error) {
						forwarded++
						return json.RawMessage(`{"model":"m"}`), nil
					}})
				begins, ends := events.Of[events.ToolCallBegin](rec), events.Of[events.ToolCallEnd](rec)
				if len(begins) != 1 || len(ends) != 1 || ends[0].Caller != caller || ends[0].Call.Kind != string(kind) {
					t.Fatalf("records %v", rec.Events())
				}
				if why != "" {
					if !res.Refused() || res.Err.Error() != why || forwarded != 0 || ends[0].Decision != events.VerdictDenied || ends[0].Error != why {
						t.Errorf("refused: %+v, forwarded %d, end %+v", res, forwarded, ends[0])
					}
					return
				}
				if res.Status != events.CallCompleted || forwarded != 1 || string(ends[0].Result) != `{"model":"m"}` {
					t.Errorf("forwarded: %+v, %d times, end %+v", res, forwarded, ends[0])
				}
			})
		}
	}
}

// TestStagesPerKind pins which stages each kind takes.
func TestStagesPerKind(t *testing.T) {
	if !pipeline.ToolCall.Stages().Has(pipeline.Decide) || pipeline.ResourceRead.Stages().Has(pipeline.Decide) {
		t.Error("only tool calls are put to approval")
	}
	for _, k := range []pipeline.Kind{pipeline.ToolCall, pipeline.Builtin, pipeline.ResourceRead, pipeline.ResourceSubscribe, pipeline.PromptGet, pipeline.Completion} {
		if s := k.Stages(); !s.Has(pipeline.Admit) || !s.Has(pipeline.Begin) || !s.Has(pipeline.End) {
			t.Errorf("%s is not admitted and audited", k)
		}
	}
	if s := pipeline.Builtin.Stages(); s.Has(pipeline.PreHooks) || s.Has(pipeline.Decide) {
		t.Error("the host's own tools are put to hooks or approval")
	}
	res := pipeline.New(pipeline.Options{}).Do(t.Context(), pipeline.Request{Kind: "bogus"})
	if res.Status != events.CallFailed || res.Err == nil {
		t.Errorf("unknown kind: %+v", res)
	}
}
