package events

import (
	"encoding/json"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// LogSink renders each event as one operator log line at a level that
// matches its outcome: failures and denials at warn, routine progress at
// info, per-call noise at debug. Tool arguments and results can hold user
// data, so they only ever appear in debug lines: at info and above an
// operator sees that a call happened and how it ended, never its payload.
// A ToolCallEnd or a rewriting ApprovalDecision therefore adds a second,
// debug-level line carrying the payload when the logger is at debug.
//
// nil logs nothing.
func LogSink(logger hclog.Logger) Sink {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	return logSink{log: logger}
}

type logSink struct{ log hclog.Logger }

func (l logSink) Emit(e Event) {
	switch e := e.(type) {
	case ServerStartup:
		l.serverStartup(e)
	case StartupComplete:
		l.startupComplete(e)
	case ServerState:
		l.serverState(e)
	case ToolCallBegin:
		l.callBegin(e)
	case ApprovalDecision:
		l.approvalDecision(e)
	case ToolCallEnd:
		l.callEnd(e)
	case PluginState:
		l.pluginState(e)
	default:
		l.unknown(e)
	}
}

// serverStartup logs a server's startup progress.
func (l logSink) serverStartup(e ServerStartup) {
	level := hclog.Info
	switch e.Status {
	case StatusStarting:
		level = hclog.Debug
	case StatusFailed:
		level = hclog.Warn
	}
	kv := []any{"server", e.Server, "status", e.Status}
	if e.Status == StatusReady {
		kv = append(kv, "tools", e.Tools, "protocol", e.Protocol)
	}
	l.log.Log(level, "server startup", withError(kv, e.Error)...)
}

// startupComplete logs the end of startup: which servers are ready, failed or cancelled.
func (l logSink) startupComplete(e StartupComplete) {
	level := hclog.Info
	if len(e.Failed) > 0 {
		level = hclog.Warn
	}
	failed := make([]string, len(e.Failed))
	for i, f := range e.Failed {
		failed[i] = f.Server + ": " + f.Error
	}
	l.log.Log(level, "startup complete",
		"ready", strings.Join(e.Ready, ","),
		"failed", strings.Join(failed, "; "),
		"cancelled", strings.Join(e.Cancelled, ","))
}

// serverState logs a server's state change after startup (a crash, a restart).
func (l logSink) serverState(e ServerState) {
	level := hclog.Info
	if e.Status == StatusFailed {
		level = hclog.Warn
	}
	kv := []any{"server", e.Server, "status", e.Status}
	if e.Restarts > 0 {
		kv = append(kv, "restarts", e.Restarts)
	}
	if e.Revision > 0 {
		kv = append(kv, "revision", e.Revision)
	}
	l.log.Log(level, "server state", withError(kv, e.Error)...)
}

// callBegin logs a call's start, at debug only.
func (l logSink) callBegin(e ToolCallBegin) {
	// Every call already gets an info line when it ends; the begin line
	// is debug, which is also what lets it carry the arguments.
	if !l.log.IsDebug() {
		return // per-call sink: build nothing a disabled level drops
	}
	l.log.Debug("tool call begin", append(callKV(e.Call), "arguments", rawText(e.Arguments))...)
}

// approvalDecision logs one approval step's verdict, and the rewritten arguments at debug.
func (l logSink) approvalDecision(e ApprovalDecision) {
	level := hclog.Info
	switch e.Verdict {
	case VerdictDenied:
		level = hclog.Warn
	case VerdictAbstain:
		level = hclog.Debug
	}
	if !l.enabled(level) {
		return
	}
	kv := append(callKV(e.Call), "step", e.Step, "by", e.By, "verdict", e.Verdict)
	if e.RiskLevel != "" {
		kv = append(kv, "risk_level", e.RiskLevel)
	}
	if e.Rationale != "" {
		kv = append(kv, "rationale", e.Rationale)
	}
	rewritten := e.Before != nil || e.After != nil
	if rewritten {
		kv = append(kv, "arguments_rewritten", true)
	}
	l.log.Log(level, "approval decision", kv...)
	if rewritten && l.log.IsDebug() {
		l.log.Debug("approval rewrote arguments",
			append(callKV(e.Call), "step", e.Step, "by", e.By, "before", rawText(e.Before), "after", rawText(e.After))...)
	}
}

// callEnd logs how a call ended, and its result at debug.
func (l logSink) callEnd(e ToolCallEnd) {
	level := hclog.Info
	if e.Status == CallFailed || e.Status == CallDenied {
		level = hclog.Warn
	}
	if !l.enabled(level) {
		return
	}
	kv := append(callKV(e.Call), "status", e.Status, "duration", e.Duration, "result_bytes", len(e.Result))
	l.log.Log(level, "tool call end", withError(kv, e.Error)...)
	if e.Result != nil && l.log.IsDebug() {
		l.log.Debug("tool call result", append(callKV(e.Call), "result", rawText(e.Result))...)
	}
}

// pluginState logs a plugin process's state change.
func (l logSink) pluginState(e PluginState) {
	level := hclog.Info
	if e.Status == PluginFailed || e.Status == PluginGivenUp {
		level = hclog.Warn
	}
	kv := []any{"plugin", e.Plugin, "kind", e.PluginKind, "status", e.Status}
	if e.Pid != 0 {
		kv = append(kv, "pid", e.Pid)
	}
	l.log.Log(level, "plugin state", withError(kv, e.Error)...)
}

// unknown logs an event type this sink does not know.
func (l logSink) unknown(e Event) {
	// An event type this sink does not know may carry a payload, so
	// its fields are shown only at debug.
	if l.log.IsDebug() {
		fields, err := json.Marshal(e)
		if err != nil {
			fields = []byte(`"unrenderable: ` + err.Error() + `"`)
		}
		l.log.Debug("event", "event", e.Kind(), "fields", string(fields))
	}
}

// enabled reports whether the logger keeps lines at level. A null logger
// keeps none.
func (l logSink) enabled(level hclog.Level) bool {
	lv := l.log.GetLevel()
	return lv != hclog.NoLevel && lv != hclog.Off && lv <= level
}

func callKV(c Call) []any {
	kv := []any{"call_id", c.CallID, "session_id", c.SessionID, "server", c.Server, "tool", c.Tool, "model_name", c.ModelName}
	if c.Caller != nil {
		kv = append(kv, "caller", c.Caller.Subject)
	}
	return kv
}

func withError(kv []any, errText string) []any {
	if errText == "" {
		return kv
	}
	return append(kv, "error", errText)
}

// rawText shows JSON as text: hclog would print a json.RawMessage as a
// byte list.
func rawText(raw json.RawMessage) string { return string(raw) }
