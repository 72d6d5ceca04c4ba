package approval

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
)

// Fakes are structs with function fields (go-style R30).

type fakeHook struct {
	NameV              string
	OnErrorV           config.OnError
	PermissionRequestF func(context.Context, Request) (HookVerdict, error)
}

func (h *fakeHook) Name() string            { return h.NameV }
func (h *fakeHook) OnError() config.OnError { return h.OnErrorV }
func (h *fakeHook) PermissionRequest(ctx context.Context, r Request) (HookVerdict, error) {
	return h.PermissionRequestF(ctx, r)
}

type fakeReviewer struct {
	NameV   string
	ReviewF func(context.Context, Request) (Assessment, error)
}

func (f *fakeReviewer) Name() string { return f.NameV }
func (f *fakeReviewer) Review(ctx context.Context, r Request) (Assessment, error) {
	return f.ReviewF(ctx, r)
}

type fakeAsker struct {
	AskApprovalF func(context.Context, Prompt) (Choice, error)
	ElicitF      func(context.Context, Elicitation) (*mcp.ElicitResult, error)
}

func (f *fakeAsker) AskApproval(ctx context.Context, p Prompt) (Choice, error) {
	return f.AskApprovalF(ctx, p)
}

func (f *fakeAsker) Elicit(ctx context.Context, e Elicitation) (*mcp.ElicitResult, error) {
	return f.ElicitF(ctx, e)
}

var (
	_ Hook     = (*fakeHook)(nil)
	_ Reviewer = (*fakeReviewer)(nil)
	_ Asker    = (*fakeAsker)(nil)
)

// trace records which fakes were called, in order, so a test can assert
// that a step short-circuited the ones after it.
type trace struct {
	mu    sync.Mutex
	calls []string
}

func (t *trace) add(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls = append(t.calls, s)
}

func (t *trace) list() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.calls...)
}
