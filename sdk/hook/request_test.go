package hook_test

import (
	"context"
	"slices"
	"testing"

	"github.com/toolgate/toolgate/sdk"
	"github.com/toolgate/toolgate/sdk/hook"
	"github.com/toolgate/toolgate/sdk/plugintest"
)

// readGuard implements the request events and counts what it is asked.
type readGuard struct {
	hook.Base
	reads, gets int
}

func (g *readGuard) PreResourceRead(_ context.Context, r hook.ResourceRequest) (hook.PreToolUseResult, error) {
	g.reads++
	return hook.Block("no " + r.URI + " for " + r.Caller.Subject), nil
}

func (g *readGuard) PrePromptGet(_ context.Context, r hook.PromptRequest) (hook.PreToolUseResult, error) {
	g.gets++
	return hook.Block("no " + r.Prompt + " with " + r.Arguments["x"]), nil
}

// listsToolEvents is readGuard with an Events list naming only the tool
// events, as a hook written before the request events lists them.
type listsToolEvents struct{ *readGuard }

func (listsToolEvents) Events() []hook.Event { return hook.AllEvents }

// TestRequestEvents: a hook that implements ResourceReadHook and
// PromptGetHook declares their events and is asked with the request; a
// hook that does not (or does not list them) declares none and is never
// asked, not even before Info.
func TestRequestEvents(t *testing.T) {
	ctx := t.Context()
	g := &readGuard{}
	c := plugintest.Hook(t, g)
	if _, err := c.PreResourceRead(ctx, hook.ResourceRequest{URI: "a://x"}); err != nil || g.reads != 0 {
		t.Fatalf("asked before Info: %v, %d reads", err, g.reads)
	}
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !info.Has(string(hook.EventPreResourceRead)) || !info.Has(string(hook.EventPrePromptGet)) {
		t.Fatalf("capabilities %v lack the request events", info.Capabilities)
	}
	res, err := c.PreResourceRead(ctx, hook.ResourceRequest{Server: "s", URI: "a://x", Caller: &sdk.Caller{Subject: "alice"}})
	if err != nil || res.Action != hook.ActionBlock || res.Reason != "no a://x for alice" {
		t.Errorf("PreResourceRead = %+v, %v", res, err)
	}
	res, err = c.PrePromptGet(ctx, hook.PromptRequest{Server: "s", Prompt: "p", Arguments: map[string]string{"x": "1"}})
	if err != nil || res.Action != hook.ActionBlock || res.Reason != "no p with 1" {
		t.Errorf("PrePromptGet = %+v, %v", res, err)
	}

	old := &readGuard{}
	for name, impl := range map[string]hook.Hook{"base": hook.Base{}, "lister": listsToolEvents{old}} {
		c := plugintest.Hook(t, impl)
		info, err := c.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(info.Capabilities, func(s string) bool {
			return s == string(hook.EventPreResourceRead) || s == string(hook.EventPrePromptGet)
		}) {
			t.Errorf("%s: capabilities %v name a request event", name, info.Capabilities)
		}
		if res, err := c.PrePromptGet(ctx, hook.PromptRequest{Prompt: "p"}); err != nil || res.Action != hook.ActionContinue {
			t.Errorf("%s: PrePromptGet = %+v, %v; want continue without asking", name, res, err)
		}
	}
	if old.gets != 0 {
		t.Error("a hook that did not list pre_prompt_get was asked")
	}
}
