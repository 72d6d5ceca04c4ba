package execution

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/mcpclient"
)

// Caller is what execution needs from the connection manager.
type Caller interface {
	CallTool(ctx context.Context, server, tool string, args any, meta mcp.Meta, opts mcpclient.CallOptions) (*mcp.CallToolResult, error)
}

// SecretRedactor is implemented by a Caller that knows the secrets each
// server was given (the manager). Execute redacts them from the event
// projection and error of every call, and from the result itself when
// inResults is set; nil redact means nothing to redact.
type SecretRedactor interface {
	Redactor(server string) (redact func(string) string, inResults bool)
}

// Model is what the model takes, as the model projection needs it (the
// model block of the configuration, translated by the host's wiring).
type Model struct {
	// ImageInput and AudioInput say the model accepts image and audio
	// content; media it does not take is replaced by a note.
	ImageInput, AudioInput bool
	// OutputBudgetBytes bounds the projection's text; 0 means
	// [DefaultOutputBudget].
	OutputBudgetBytes int
}

// DefaultOutputBudget is the output budget of a [Model] that sets none.
const DefaultOutputBudget = 12000

// Options configure an [Executor]. Caller is required; every other zero
// value is usable.
type Options struct {
	Caller Caller
	// Model decides the model projection (media support, output budget).
	Model Model
	// Permissions is the profile reported to servers that declared a
	// sandbox-state capability ("read-only", "workspace-write",
	// "full-access"); "" sends an empty profile.
	Permissions string
	// Cwd is the sandbox working directory reported in sandbox-state meta;
	// "" leaves it out.
	Cwd string
	// CallMeta names the servers whose calls carry the call id and the
	// session id in _meta (their call_meta); see [Meta].
	CallMeta map[string]bool
	// RecordResults puts each call's event projection (up to 1 MiB) in
	// Result.EventResult, for its tool_call_end event. Serializing a result costs about as much as
	// the rest of the host's work on a call, so it is done only for a
	// sink that keeps it (the audit log, a debug log).
	RecordResults bool
	// Logger nil means no logging.
	Logger hclog.Logger
	// Now is the clock for wall time and event timestamps; nil means
	// time.Now (tests inject a fixed clock).
	Now func() time.Time
}

// Request is one approved call.
type Request struct {
	// Call identifies the call (ids, raw route, model name); Server and
	// Tool are the raw route sent on the wire.
	Call events.Call
	// Arguments is the JSON object to send (see [ParseArguments]); nil
	// means no arguments.
	Arguments json.RawMessage
	// Capabilities are the server's, from initialize; they decide the
	// sandbox-state meta. nil means none declared.
	Capabilities *mcp.ServerCapabilities
	// Timeout bounds the call's active time; 0 means the server's
	// tool_timeout_sec (the manager's default).
	Timeout time.Duration
	// OnProgress receives the server's progress notifications for this
	// call; it must not block.
	OnProgress func(*mcp.ProgressNotificationParams)
	// Started is when the call entered the host, so wall time includes
	// approval waits; zero means when Execute starts.
	Started time.Time
}

// Result is an executed call: what the server answered, or why it could
// not, and both projections' inputs.
type Result struct {
	// Raw is the server's answer; nil when the transport failed.
	Raw *mcp.CallToolResult
	// Err is a transport or host failure, a [*CallError]; nil when the
	// server answered, even with isError.
	Err error
	// Status is events.CallCompleted or events.CallFailed (isError or Err).
	Status string
	// Wall is the time from Request.Started to the answer.
	Wall time.Duration
	// Finished is when the answer came.
	Finished time.Time
	// EventResult and EventError are what the call's tool_call_end
	// records (redacted; EventResult only with Options.RecordResults).
	EventResult json.RawMessage
	EventError  string

	model Model
}

// Output is the result as the model receives it ([ModelProjection]). It
// is computed on demand: a gateway forwards Raw and never needs it.
func (r Result) Output() ModelOutput {
	return ModelProjection(r.Raw, r.Err, r.Wall, r.model)
}

// CallError is a call the server never answered: the route failed, the
// transport broke, or the timeout expired. Unwrap reaches the cause, so
// errors.As finds a [*mcpclient.TimeoutError] and errors.Is matches
// manager and mcpclient sentinels. The call may or may not have run on
// the server; the host does not retry it.
type CallError struct {
	Server, Tool string
	Err          error
}

func (e *CallError) Error() string {
	return fmt.Sprintf("tool call failed for `%s/%s`: %v", e.Server, e.Tool, e.Err)
}

func (e *CallError) Unwrap() error { return e.Err }

// Executor runs approved calls. It is immutable and safe for concurrent
// use.
type Executor struct {
	caller Caller
	model  Model
	perms  string
	cwd    string
	// callMeta holds the servers whose calls carry the call ids.
	callMeta map[string]bool
	record   bool
	log      hclog.Logger
	now      func() time.Time
}

// New returns an Executor. It panics when opts.Caller is nil: that is a
// wiring bug, not a runtime condition.
func New(opts Options) *Executor {
	if opts.Caller == nil {
		panic("execution.New: Options.Caller is nil")
	}
	e := &Executor{
		caller:   opts.Caller,
		model:    opts.Model,
		perms:    opts.Permissions,
		cwd:      opts.Cwd,
		callMeta: opts.CallMeta,
		record:   opts.RecordResults,
		log:      opts.Logger,
		now:      opts.Now,
	}
	if e.log == nil {
		e.log = hclog.NewNullLogger()
	}
	e.log = e.log.Named("execution")
	if e.now == nil {
		e.now = time.Now
	}
	return e
}

// Execute sends the call through the Caller with its _meta, timeout and
// progress callback and projects the outcome, with what the call's
// tool_call_end records (host/pipeline emits it). It never retries. A cancelled ctx ends the call
// as a failure (the server is told through notifications/cancelled).
func (e *Executor) Execute(ctx context.Context, req Request) Result {
	started := req.Started
	if started.IsZero() {
		started = e.now()
	}
	call := req.Call
	meta := Meta(call, req.Capabilities, e.perms, e.cwd, e.callMeta[call.Server])
	// A nil RawMessage in an interface would go on the wire as
	// "arguments": null; a nil interface becomes {}.
	var args any
	if len(req.Arguments) > 0 {
		args = req.Arguments
	}
	raw, err := e.caller.CallTool(ctx, call.Server, call.Tool, args, meta, mcpclient.CallOptions{
		Timeout:    req.Timeout,
		OnProgress: req.OnProgress,
	})
	finished := e.now()
	wall := finished.Sub(started)

	redact, inResults := e.redactor(call.Server)
	if inResults && raw != nil {
		raw = RedactResult(raw, redact)
	}
	res := Result{Raw: raw, Status: events.CallCompleted, Wall: wall, model: e.model}
	switch {
	case err != nil:
		res.Raw = nil
		res.Err = &CallError{Server: call.Server, Tool: call.Tool, Err: err}
		res.Status = events.CallFailed
		e.log.Warn("tool call failed", "server", call.Server, "tool", call.Tool, "call_id", call.CallID, "error", err)
	case raw == nil:
		// A Caller must return a result or an error; treat a broken one
		// as a host failure rather than a silent success.
		res.Err = &CallError{Server: call.Server, Tool: call.Tool, Err: errNoResult}
		res.Status = events.CallFailed
		e.log.Warn("tool call failed", "server", call.Server, "tool", call.Tool, "call_id", call.CallID, "error", errNoResult)
	case raw.IsError:
		res.Status = events.CallFailed
	}
	if e.log.IsDebug() {
		e.log.Debug("tool call finished", "server", call.Server, "tool", call.Tool, "call_id", call.CallID,
			"status", res.Status, "wall", wall)
	}
	res.Finished = finished
	// What toolgate records (events: the audit log, debug log lines) is
	// redacted of the server's secrets and of well-known credential
	// formats, whatever the model gets.
	record := func(s string) string {
		if redact != nil && !inResults {
			s = redact(s)
		}
		return mcpclient.RedactSecretFormats(s)
	}
	if e.record {
		res.EventResult = json.RawMessage(record(string(EventProjection(res.Raw, res.Err))))
	}
	if res.Err != nil {
		res.EventError = Truncate(res.Err.Error(), EventResultMaxBytes)
		if redact != nil {
			res.EventError = redact(res.EventError)
		}
		res.EventError = mcpclient.RedactSecretFormats(res.EventError)
	}
	return res
}

// redactor is the Caller's redaction for server, if it has one.
func (e *Executor) redactor(server string) (func(string) string, bool) {
	r, ok := e.caller.(SecretRedactor)
	if !ok {
		return nil, false
	}
	redact, inResults := r.Redactor(server)
	return redact, inResults && redact != nil
}

var errNoResult = errors.New("the connection manager returned neither a result nor an error")
