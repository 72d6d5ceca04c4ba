package events

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/host/identity"
)

type logLine map[string]any

func logLines(t *testing.T, buf *bytes.Buffer) []logLine {
	t.Helper()
	var out []logLine
	sc := bufio.NewScanner(buf)
	for sc.Scan() {
		var l logLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("log line %q is not JSON: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}

func captureLog(level hclog.Level) (*bytes.Buffer, hclog.Logger) {
	var buf bytes.Buffer
	return &buf, hclog.New(&hclog.LoggerOptions{Output: &buf, Level: level, JSONFormat: true})
}

var testCall = Call{CallID: "c1", SessionID: "s1", Server: "files", Tool: "write_file", ModelName: "mcp__files__write_file"}

// callerCall is testCall made by a caller known from an access token.
var callerCall = Call{CallID: "c2", SessionID: "s1", Server: "files", Tool: "write_file", ModelName: "mcp__files__write_file",
	Caller: &identity.Caller{Subject: "alice", Groups: []string{"admins"}}}

const secretPayload = "PAYLOAD-7f3a" // stands for user data in arguments and results

func TestLogSinkLevels(t *testing.T) {
	tests := []struct {
		name      string
		event     Event
		wantLevel string // "" = no line at info
		wantMsg   string
		wantKV    map[string]any
	}{
		{"startup starting", startup("a", StatusStarting), "", "", nil},
		{"startup ready", ServerStartup{Server: "a", Status: StatusReady, Tools: 3, Protocol: "2025-06-18"},
			"info", "server startup", map[string]any{"server": "a", "tools": 3.0, "protocol": "2025-06-18"}},
		{"startup failed", ServerStartup{Server: "a", Status: StatusFailed, Error: "exec: not found"},
			"warn", "server startup", map[string]any{"error": "exec: not found"}},
		{"startup complete with failures", StartupComplete{Ready: []string{"a"}, Failed: []ServerError{{"b", "boom"}}},
			"warn", "startup complete", map[string]any{"ready": "a", "failed": "b: boom"}},
		{"startup complete", StartupComplete{Ready: []string{"a", "b"}}, "info", "startup complete", map[string]any{"ready": "a,b"}},
		{"server failed", ServerState{Server: "a", Status: StatusFailed, Restarts: 2},
			"warn", "server state", map[string]any{"restarts": 2.0}},
		{"call begin is debug", ToolCallBegin{Call: testCall, Arguments: json.RawMessage(`{"p":"` + secretPayload + `"}`)},
			"", "", nil},
		{"approved", ApprovalDecision{Call: testCall, Step: "hook", By: "policy", Verdict: VerdictApproved},
			"info", "approval decision", map[string]any{"by": "policy", "verdict": "approved", "model_name": testCall.ModelName}},
		{"a caller's call", ToolCallEnd{Call: callerCall, Status: CallCompleted},
			"info", "tool call end", map[string]any{"caller": "alice", "model_name": testCall.ModelName}},
		{"denied", ApprovalDecision{Call: testCall, Step: "guardian", By: "guardian", Verdict: VerdictDenied, Rationale: "too risky", RiskLevel: "high"},
			"warn", "approval decision", map[string]any{"rationale": "too risky", "risk_level": "high"}},
		{"abstain is debug", ApprovalDecision{Call: testCall, Step: "hook", By: "p", Verdict: VerdictAbstain}, "", "", nil},
		{"rewrite hides arguments", ApprovalDecision{Call: testCall, Step: "pre_tool_use", By: "p", Verdict: VerdictApproved,
			Before: json.RawMessage(`{"p":"` + secretPayload + `"}`), After: json.RawMessage(`{}`)},
			"info", "approval decision", map[string]any{"arguments_rewritten": true}},
		{"call completed", ToolCallEnd{Call: testCall, Status: CallCompleted, Duration: time.Second, Result: json.RawMessage(`"` + secretPayload + `"`)},
			"info", "tool call end", map[string]any{"status": "completed", "result_bytes": 14.0}},
		{"call failed", ToolCallEnd{Call: testCall, Status: CallFailed, Error: "timed out"},
			"warn", "tool call end", map[string]any{"error": "timed out"}},
		{"call denied", ToolCallEnd{Call: testCall, Status: CallDenied}, "warn", "tool call end", nil},
		{"plugin given up", PluginState{Plugin: "policy", PluginKind: "hook", Status: PluginGivenUp, Error: "crashed 5 times"},
			"warn", "plugin state", map[string]any{"plugin": "policy", "kind": "hook"}},
		{"plugin started", PluginState{Plugin: "policy", PluginKind: "hook", Status: PluginStarted, Pid: 42},
			"info", "plugin state", map[string]any{"pid": 42.0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf, logger := captureLog(hclog.Info)
			LogSink(logger).Emit(tt.event)
			if strings.Contains(buf.String(), secretPayload) {
				t.Fatalf("arguments or results reached an info log:\n%s", buf.String())
			}
			lines := logLines(t, buf)
			if tt.wantLevel == "" {
				if len(lines) != 0 {
					t.Fatalf("want no line at info, got %v", lines)
				}
				return
			}
			if len(lines) != 1 {
				t.Fatalf("want exactly one line, got %v", lines)
			}
			l := lines[0]
			if l["@level"] != tt.wantLevel || l["@message"] != tt.wantMsg {
				t.Errorf("got %v %q, want %v %q", l["@level"], l["@message"], tt.wantLevel, tt.wantMsg)
			}
			for k, v := range tt.wantKV {
				if l[k] != v {
					t.Errorf("%s = %#v, want %#v (line %v)", k, l[k], v, l)
				}
			}
		})
	}
}

func TestLogSinkShowsPayloadsOnlyAtDebug(t *testing.T) {
	buf, logger := captureLog(hclog.Debug)
	sink := LogSink(logger)
	sink.Emit(ToolCallBegin{Call: testCall, Arguments: json.RawMessage(`{"p":"` + secretPayload + `-args"}`)})
	sink.Emit(ToolCallEnd{Call: testCall, Status: CallCompleted, Result: json.RawMessage(`"` + secretPayload + `-result"`)})

	var payloadLevels []string
	for _, l := range logLines(t, buf) {
		line, _ := json.Marshal(l)
		if strings.Contains(string(line), secretPayload) {
			payloadLevels = append(payloadLevels, l["@level"].(string))
		}
	}
	if len(payloadLevels) != 2 {
		t.Fatalf("want arguments and result in debug lines, got payload at %v:\n%s", payloadLevels, buf.String())
	}
	for _, lvl := range payloadLevels {
		if lvl != "debug" {
			t.Errorf("payload logged at %s", lvl)
		}
	}
}

func TestLogSinkNilLogger(t *testing.T) {
	LogSink(nil).Emit(startup("a", StatusFailed)) // must not panic
}
