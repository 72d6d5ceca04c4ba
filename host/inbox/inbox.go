package inbox

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/host/approval"
	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/identity"
)

// Errors of [Inbox.Answer], matched with errors.Is; the texts say why and
// what to do.
var (
	ErrNotApprover = errors.New("not an approver")
	ErrOwnCall     = errors.New("approving one's own call is not allowed")
	ErrAnswered    = errors.New("the approval is not pending")
)

// Approver is who answers, as authenticated by the front end.
type Approver struct {
	// Name is shown and audited: the OAuth subject, or what the static
	// credential stands for ("token holder", "local user").
	Name string
	// Caller is the OAuth identity; nil for the static token or loopback.
	Caller *identity.Caller
}

// Authenticate turns the credential of an HTTP request (a bearer token,
// "" when none was sent) into an approver, or fails. The gateway
// provides it from what it already checks: its OAuth resource server
// or its static token.
type Authenticate func(ctx context.Context, token string) (Approver, error)

// Options configure an [Inbox].
type Options struct {
	// Store keeps the approvals; nil = the in-process store.
	Store Store
	// Logger; nil = no logging.
	Logger hclog.Logger
	// Now is the clock; nil = time.Now.
	Now func() time.Time
	// Heartbeat is how often a held call reports that it is still
	// waiting; 0 = 10s.
	Heartbeat time.Duration
	// Notify posts webhooks; nil = http.DefaultClient's transport with a
	// 10s timeout (see notify.go).
	NotifyClient HTTPDoer
}

// Inbox holds calls for a human. Attach it to a configuration and an
// event sink before calls arrive ([Inbox.Attach]).
type Inbox struct {
	store     Store
	log       hclog.Logger
	now       func() time.Time
	heartbeat time.Duration
	notifier  *notifier

	mu      sync.Mutex
	config  func() *config.Inbox // guarded by mu
	sink    events.Sink          // guarded by mu
	baseURL string               // guarded by mu
	// waiters are the held calls, by approval id: closed on any change.
	waiters map[string]chan struct{}
	// subs are the live pages and API clients (server-sent events).
	subs map[chan struct{}]struct{}
	// verdicts are the earlier steps' verdicts, by call id, for the
	// calls that may still reach the inbox (bounded: verdictOrder).
	verdicts     map[string][]Verdict
	verdictOrder []string
	// approved is the definition hash last approved per server/tool.
	approved map[[2]string]string
	closed   bool
}

const maxVerdictCalls = 1024

// New returns an inbox. It starts the webhook sender; Close stops it.
func New(opts Options) *Inbox {
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	store := opts.Store
	if store == nil {
		store = NewMemoryStore()
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	hb := opts.Heartbeat
	if hb <= 0 {
		hb = 10 * time.Second
	}
	in := &Inbox{
		store: store, log: log.Named("inbox"), now: now, heartbeat: hb,
		config:   func() *config.Inbox { return nil },
		waiters:  map[string]chan struct{}{},
		subs:     map[chan struct{}]struct{}{},
		verdicts: map[string][]Verdict{},
		approved: map[[2]string]string{},
	}
	in.notifier = newNotifier(opts.NotifyClient, in.log.Named("notify"))
	return in
}

// Attach gives the inbox its configuration (read at each call, so a
// reload applies) and the sink its audit records go to.
func (in *Inbox) Attach(cfg func() *config.Inbox, sink events.Sink) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.config, in.sink = cfg, sink
}

// SetBaseURL sets where approvers reach the page when the configuration
// names no url: the serve listener's own URL, known once it is bound.
func (in *Inbox) SetBaseURL(u string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.baseURL = strings.TrimSuffix(u, "/")
}

// Close stops the webhook sender and releases held calls (they end as
// cancelled).
func (in *Inbox) Close() {
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return
	}
	in.closed = true
	for id, ch := range in.waiters {
		close(ch)
		delete(in.waiters, id)
	}
	for ch := range in.subs {
		close(ch)
		delete(in.subs, ch)
	}
	in.mu.Unlock()
	in.notifier.close()
}

func (in *Inbox) isClosed() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.closed
}

func (in *Inbox) cfg() *config.Inbox {
	in.mu.Lock()
	f := in.config
	in.mu.Unlock()
	return f()
}

// Enabled reports whether the configuration has an inbox block.
func (in *Inbox) Enabled() bool { return in.cfg() != nil }

// URL is the page's address ("" until known).
func (in *Inbox) URL() string {
	base := ""
	if c := in.cfg(); c != nil && c.URL != "" {
		base = c.URL
	} else {
		in.mu.Lock()
		base = in.baseURL
		in.mu.Unlock()
	}
	if base == "" {
		return "/approvals"
	}
	return base + "/approvals"
}

func (in *Inbox) link(id string) string { return in.URL() + "/" + id }

// route is the first route block that matches the call, or nil.
func route(c *config.Inbox, server, tool string, caller *identity.Caller) *config.InboxRoute {
	for i := range c.Routes {
		r := &c.Routes[i]
		if len(r.Servers) > 0 && !slices.Contains(r.Servers, server) {
			continue
		}
		if len(r.Tools) > 0 && !slices.Contains(r.Tools, tool) && !slices.Contains(r.Tools, server+"/"+tool) {
			continue
		}
		if len(r.Callers) > 0 && !matchesAny(r.Callers, caller) {
			continue
		}
		return r
	}
	return nil
}

// matchesAny reports whether c is named by one of the principals
// ("sub:…", "group:…", "email:…").
func matchesAny(principals []string, c *identity.Caller) bool {
	if c == nil {
		return false
	}
	for _, p := range principals {
		kind, name, _ := strings.Cut(p, ":")
		switch kind {
		case "sub":
			if c.Subject == name {
				return true
			}
		case "group":
			if slices.Contains(c.Groups, name) {
				return true
			}
		case "email":
			if c.Email != "" && strings.EqualFold(c.Email, name) {
				return true
			}
		}
	}
	return false
}

// Binding is the hash an approval is bound to: the server, the tool, its
// definition hash, the SHA-256 of the canonical arguments (object keys
// sorted, no blanks) and the caller. A call that differs in any of them
// is not covered.
func Binding(server, tool, definition string, arguments json.RawMessage, caller *identity.Caller) string {
	b, _ := json.Marshal([]string{server, tool, definition, argumentsHash(arguments), caller.Key()})
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// argumentsHash hashes the canonical form of a JSON value: decoded and
// encoded again, which sorts object keys and drops blanks, so two
// encodings of the same arguments bind alike.
func argumentsHash(raw json.RawMessage) string {
	canon := []byte("{}")
	if len(raw) > 0 {
		var v any
		if err := json.Unmarshal(raw, &v); err == nil {
			if b, err := json.Marshal(v); err == nil {
				canon = b
			}
		} else {
			canon = raw
		}
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

// Ask answers the user step for p through the inbox. In hold mode it
// waits for an answer, calling progress (when not nil) at once and every
// heartbeat with "waiting for approval: <link>"; in retry mode it
// returns at once. It returns the approver's choice, or an
// *approval.AskerDenial whose text says what happened and what the user
// can do next.
func (in *Inbox) Ask(ctx context.Context, p approval.Prompt, progress func(message string)) (approval.Choice, error) {
	c := in.cfg()
	if c == nil {
		return approval.ChoiceDecline, &approval.NobodyToAsk{Why: "the approval inbox is not configured", Next: "Add an inbox {} block, on a line of its own, inside the approval block of the configuration."}
	}
	mode := c.Mode
	if r := route(c, p.Server, p.Tool, p.Caller); r != nil && r.Mode != "" {
		mode = r.Mode
	}
	def := approval.DefinitionHash(p.Tool, p.Description, p.InputSchema, p.Annotations)
	binding := Binding(p.Server, p.Tool, def, p.Arguments, p.Caller)
	in.sweep()

	// A call made again after its approval was answered (retry mode, or
	// a client that retried a held call).
	for _, a := range in.store.Find(binding) {
		switch a.Status {
		case StatusApproved:
			if used, err := in.use(a.ID); err == nil {
				return in.choice(used, p), nil
			}
		case StatusDenied:
			if !a.delivered {
				if _, err := in.store.Update(a.ID, func(x *Approval) error { x.delivered = true; return nil }); err == nil {
					return approval.ChoiceDecline, in.deniedText(a)
				}
			}
		case StatusPending:
			if mode == config.InboxRetry {
				return approval.ChoiceDecline, in.pendingText(a)
			}
		}
	}

	a := in.newApproval(p, c, mode, def, binding)
	if err := in.store.Put(a); err != nil {
		return approval.ChoiceDecline, fmt.Errorf("hold the call for approval: %w", err)
	}
	in.emit(a, events.HeldPending, nil)
	in.changed(a.ID)
	if c.Notify != nil {
		in.notifier.post(c.Notify, notification(a))
	}
	in.log.Info("call held for approval", "approval_id", a.ID, "server", a.Server, "tool", a.Tool, "mode", mode, "link", a.Link)
	if mode == config.InboxRetry {
		return approval.ChoiceDecline, in.pendingText(a)
	}
	return in.hold(ctx, a, p, progress)
}

// hold waits for the answer to a.
func (in *Inbox) hold(ctx context.Context, a Approval, p approval.Prompt, progress func(string)) (approval.Choice, error) {
	timeout := time.NewTimer(a.Expires.Sub(in.now()))
	defer timeout.Stop()
	beat := time.NewTicker(in.heartbeat)
	defer beat.Stop()
	say := func() {
		if progress != nil {
			progress(fmt.Sprintf("waiting for approval: %s (approval %s, waiting %s)", a.Link, a.ID, in.now().Sub(a.Created).Round(time.Second)))
		}
	}
	say()
	for {
		wait := in.waiter(a.ID)
		cur, ok := in.store.Get(a.ID)
		if !ok {
			return approval.ChoiceCancel, fmt.Errorf("%w: approval %s vanished from the store", ErrNotFound, a.ID)
		}
		switch cur.Status {
		case StatusApproved:
			used, err := in.use(a.ID)
			if err != nil {
				return approval.ChoiceCancel, err
			}
			return in.choice(used, p), nil
		case StatusDenied:
			_, _ = in.store.Update(a.ID, func(x *Approval) error { x.delivered = true; return nil })
			return approval.ChoiceDecline, in.deniedText(cur)
		case StatusPending:
		default:
			return approval.ChoiceDecline, &approval.AskerDenial{By: "host", Text: fmt.Sprintf("MCP tool call denied: approval %s is %s.", a.ID, cur.Status)}
		}
		select {
		case <-wait:
			if in.isClosed() {
				return approval.ChoiceCancel, errors.New("toolgate is shutting down")
			}
		case <-beat.C:
			say()
		case <-timeout.C:
			in.finish(a.ID, StatusExpired, events.HeldExpired)
			return approval.ChoiceDecline, &approval.AskerDenial{By: "host", Text: fmt.Sprintf(
				"MCP tool call denied: nobody answered approval %s within %s (approval { inbox { timeout } }). "+
					"Ask the user to watch %s and call the tool again, or to raise the timeout.",
				a.ID, a.Expires.Sub(a.Created).Round(time.Second), in.URL())}
		case <-ctx.Done():
			in.finish(a.ID, StatusWithdrawn, "")
			return approval.ChoiceCancel, ctx.Err()
		}
	}
}

// finish ends a pending approval that nobody answered.
func (in *Inbox) finish(id string, st Status, action string) {
	a, err := in.store.Update(id, func(x *Approval) error {
		if x.Status != StatusPending {
			return ErrAnswered
		}
		x.Status = st
		return nil
	})
	if err != nil {
		return
	}
	if action != "" {
		in.emit(a, action, nil)
	}
	in.changed(id)
}

// use marks an approved approval used: it covers one call only.
func (in *Inbox) use(id string) (Approval, error) {
	a, err := in.store.Update(id, func(x *Approval) error {
		if x.Status != StatusApproved {
			return fmt.Errorf("%w: approval %s is %s", ErrAnswered, id, x.Status)
		}
		if in.now().After(x.Expires) {
			x.Status = StatusExpired
			return nil
		}
		x.Status = StatusUsed
		return nil
	})
	if err != nil {
		return a, err
	}
	in.changed(id)
	if a.Status != StatusUsed {
		in.emit(a, events.HeldExpired, nil)
		return a, fmt.Errorf("%w: approval %s expired before the call was made again", ErrAnswered, id)
	}
	in.emit(a, events.HeldUsed, nil)
	return a, nil
}

func (in *Inbox) choice(a Approval, p approval.Prompt) approval.Choice {
	if a.Answer != nil && a.Answer.Scope == ScopeSession && slices.Contains(p.Choices, approval.ChoiceAllowSession) {
		return approval.ChoiceAllowSession
	}
	return approval.ChoiceAllow
}

func (in *Inbox) pendingText(a Approval) error {
	return &approval.AskerDenial{By: "host", Text: fmt.Sprintf(
		"MCP tool call not run yet: it needs a human's approval, which is pending as approval %s at %s. "+
			"After it is approved, call this tool again with exactly the same arguments and it will run once; "+
			"different arguments need an approval of their own. The user can also run: toolgate approve %s",
		a.ID, a.Link, a.ID)}
}

func (in *Inbox) deniedText(a Approval) error {
	who, reason := "an approver", "no reason given"
	if a.Answer != nil {
		who = a.Answer.Approver
		if strings.TrimSpace(a.Answer.Reason) != "" {
			reason = a.Answer.Reason
		}
	}
	return &approval.AskerDenial{By: who, Text: fmt.Sprintf(
		"MCP tool call denied by %s (approval %s): %s. Do not retry the same call; adapt to the reason, or ask the user.",
		who, a.ID, reason)}
}

func (in *Inbox) newApproval(p approval.Prompt, c *config.Inbox, mode config.InboxMode, def, binding string) Approval {
	now := in.now()
	id := newID()
	title := p.Title
	if title == "" && p.Annotations != nil {
		title = p.Annotations.Title
	}
	desc, _, _ := strings.Cut(strings.TrimSpace(p.Description), "\n")
	life := c.Expiry
	if mode == config.InboxHold {
		life = c.Timeout
	}
	scopes := []string{ScopeOnce}
	if slices.Contains(p.Choices, approval.ChoiceAllowSession) {
		scopes = append(scopes, ScopeSession)
	}
	in.mu.Lock()
	prev, known := in.approved[[2]string{p.Server, p.Tool}]
	verdicts := slices.Clone(in.verdicts[p.CallID])
	in.mu.Unlock()
	return Approval{
		ID: id, CallID: p.CallID, SessionID: p.SessionID,
		Server: p.Server, Tool: p.Tool, ModelName: p.ModelName, Title: title, Description: desc,
		Annotations: p.Annotations, Arguments: Redact(p.Arguments),
		Definition: def, DefinitionChanged: known && prev != def,
		ApprovalMode: p.Mode, Caller: p.Caller, Verdicts: verdicts,
		Binding: binding, Mode: mode, Link: in.link(id),
		Created: now, Expires: now.Add(life), Status: StatusPending, Scopes: scopes,
	}
}

// newID is an approval id: short enough to type (toolgate approve ID),
// random so that ids cannot be guessed across restarts.
func newID() string {
	return "ap-" + strings.ToLower(rand.Text()[:12])
}

// Answer records an approver's answer to a pending approval. scope is
// ScopeOnce or ScopeSession for an approval; reason is for a denial.
// Refusals (not an approver, one's own call with separate_approver, an
// approval no longer pending) are audited too.
func (in *Inbox) Answer(id string, who Approver, approve bool, scope, reason string) (Approval, error) {
	c := in.cfg()
	if c == nil {
		return Approval{}, fmt.Errorf("%w: the approval inbox is not configured on this toolgate serve", ErrNotFound)
	}
	in.sweep()
	cur, ok := in.store.Get(id)
	if !ok {
		return Approval{}, fmt.Errorf("%w: %s is not held by this toolgate serve. Approvals live in the process that holds the call: "+
			"with several replicas, use the link from the notification or the denial text, which reaches the replica that holds it", ErrNotFound, id)
	}
	if len(c.Approvers) > 0 && !matchesAny(c.Approvers, who.Caller) {
		err := fmt.Errorf("%w: %s is not among the approvers of this inbox (approval { inbox { approvers } })", ErrNotApprover, who.Name)
		in.emit(cur, events.HeldRefused, &Answer{Approver: who.Name, ApproverCaller: who.Caller, Reason: err.Error(), At: in.now()})
		return cur, err
	}
	if c.SeparateApprover && (who.Caller.Key() == "" || cur.Caller.Key() == "" || who.Caller.Key() == cur.Caller.Key()) {
		err := fmt.Errorf("%w: separate_approver = true: %s may not answer this call; another approver must "+
			"(both the caller and the approver need an OAuth identity, serve { auth })", ErrOwnCall, who.Name)
		in.emit(cur, events.HeldRefused, &Answer{Approver: who.Name, ApproverCaller: who.Caller, Reason: err.Error(), At: in.now()})
		return cur, err
	}
	if approve && scope != ScopeSession {
		scope = ScopeOnce
	}
	if approve && !slices.Contains(cur.Scopes, scope) {
		return cur, fmt.Errorf("%w: approval %s cannot be given for the session (its approval mode asks every time); approve it once", ErrNotApprover, id)
	}
	ans := &Answer{Approver: who.Name, ApproverCaller: who.Caller, At: in.now()}
	if approve {
		ans.Scope = scope
	} else {
		ans.Reason = strings.TrimSpace(reason)
	}
	a, err := in.store.Update(id, func(x *Approval) error {
		if x.Status != StatusPending {
			by := ""
			if x.Answer != nil {
				by = " by " + x.Answer.Approver
			}
			return fmt.Errorf("%w: approval %s was already %s%s; an approval is answered once", ErrAnswered, id, x.Status, by)
		}
		if in.now().After(x.Expires) {
			x.Status = StatusExpired
			return nil
		}
		x.Answer = ans
		x.Status = StatusDenied
		if approve {
			x.Status = StatusApproved
		}
		return nil
	})
	if err != nil {
		in.emit(cur, events.HeldRefused, &Answer{Approver: who.Name, ApproverCaller: who.Caller, Reason: err.Error(), At: in.now()})
		return a, err
	}
	in.changed(id)
	if a.Status == StatusExpired {
		in.emit(a, events.HeldExpired, nil)
		return a, fmt.Errorf("%w: approval %s expired before it was answered", ErrAnswered, id)
	}
	action := events.HeldDenied
	if approve {
		action = events.HeldApproved
		in.mu.Lock()
		in.approved[[2]string{a.Server, a.Tool}] = a.Definition
		in.mu.Unlock()
	}
	in.emit(a, action, ans)
	in.log.Info("approval answered", "approval_id", id, "action", action, "approver", who.Name)
	return a, nil
}

// Get returns one approval.
func (in *Inbox) Get(id string) (Approval, bool) {
	in.sweep()
	return in.store.Get(id)
}

// List returns the approvals: pending ones first (oldest first), then
// the answered ones, newest first.
func (in *Inbox) List() []Approval {
	in.sweep()
	all := in.store.List()
	var pending, done []Approval
	for _, a := range all {
		if a.Status == StatusPending {
			pending = append(pending, a)
		} else {
			done = append([]Approval{a}, done...)
		}
	}
	return append(pending, done...)
}

// keepAnswered is how long an answered or expired approval stays listed.
const keepAnswered = time.Hour

// sweep expires pending approvals past their time and forgets old ones.
func (in *Inbox) sweep() {
	now := in.now()
	for _, a := range in.store.List() {
		switch {
		case a.Status == StatusPending && now.After(a.Expires):
			in.finish(a.ID, StatusExpired, events.HeldExpired)
		case a.Status != StatusPending && now.After(a.Expires.Add(keepAnswered)):
			in.store.Delete(a.ID)
		}
	}
}

// waiter returns a channel closed at id's next change.
func (in *Inbox) waiter(id string) <-chan struct{} {
	in.mu.Lock()
	defer in.mu.Unlock()
	ch, ok := in.waiters[id]
	if !ok {
		ch = make(chan struct{})
		if in.closed {
			close(ch)
			return ch
		}
		in.waiters[id] = ch
	}
	return ch
}

// changed wakes the call held on id and the live pages.
func (in *Inbox) changed(id string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if ch, ok := in.waiters[id]; ok {
		close(ch)
		delete(in.waiters, id)
	}
	for ch := range in.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// subscribe returns a channel that receives (coalesced) a value at each
// change, and its cancel.
func (in *Inbox) subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		close(ch)
		return ch, func() {}
	}
	in.subs[ch] = struct{}{}
	return ch, func() {
		in.mu.Lock()
		defer in.mu.Unlock()
		if _, ok := in.subs[ch]; ok {
			delete(in.subs, ch)
			close(ch)
		}
	}
}

// Emit records the verdicts of the approval chain's earlier steps (hooks,
// the Guardian), so that an approver sees what they said. Register the
// inbox as an event sink of the host.
func (in *Inbox) Emit(e events.Event) {
	d, ok := e.(events.ApprovalDecision)
	if !ok || d.CallID == "" || approval.DecisionStep(d.Step) == approval.StepUser {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if _, seen := in.verdicts[d.CallID]; !seen {
		in.verdictOrder = append(in.verdictOrder, d.CallID)
		if len(in.verdictOrder) > maxVerdictCalls {
			delete(in.verdicts, in.verdictOrder[0])
			in.verdictOrder = in.verdictOrder[1:]
		}
	}
	in.verdicts[d.CallID] = append(in.verdicts[d.CallID], Verdict{Step: d.Step, By: d.By, Verdict: d.Verdict, RiskLevel: d.RiskLevel, Rationale: d.Rationale})
}

// emit audits one step of an approval's life.
func (in *Inbox) emit(a Approval, action string, ans *Answer) {
	in.mu.Lock()
	sink := in.sink
	in.mu.Unlock()
	if sink == nil {
		return
	}
	e := events.HeldApproval{
		At:         in.now(),
		Call:       events.Call{CallID: a.CallID, SessionID: a.SessionID, Server: a.Server, Tool: a.Tool, ModelName: a.ModelName, Caller: a.Caller},
		ApprovalID: a.ID,
		Binding:    a.Binding,
		Action:     action,
	}
	if ans != nil {
		e.Approver, e.ApproverCaller, e.Scope, e.Reason = ans.Approver, ans.ApproverCaller, ans.Scope, ans.Reason
	}
	sink.Emit(e)
}

// secretKey matches argument names whose values are credentials.
var secretKey = regexp.MustCompile(`(?i)(pass(word|wd|phrase)?|secret|token|api[-_]?key|private[-_]?key|credential|authorization|cookie|session[-_]?id)`)

// secretValue matches values that look like credentials whatever their
// key: bearer headers and well-known token prefixes.
var secretValue = regexp.MustCompile(`^(Bearer |Basic |sk-|ghp_|gho_|github_pat_|xox[abpr]-|AKIA[0-9A-Z]{12})`)

// Redacted replaces a secret in what an approver sees.
const Redacted = "[redacted]"

// Redact returns the arguments with the values of secret-looking keys
// and secret-looking strings replaced, for display. Invalid JSON is
// shown as a string.
func Redact(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage(`{}`)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		b, _ := json.Marshal(string(raw))
		return b
	}
	b, err := json.Marshal(redact(v))
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}

func redact(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			if _, isObj := val.(map[string]any); !isObj && secretKey.MatchString(k) {
				out[k] = Redacted
				continue
			}
			out[k] = redact(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = redact(val)
		}
		return out
	case string:
		if secretValue.MatchString(x) {
			return Redacted
		}
	}
	return v
}
