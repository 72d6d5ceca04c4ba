package gateway_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/internal/testwait"
)

// everything is a gateway in front of server-everything, and a direct
// connection to another instance for comparison.
func everything(t *testing.T, upstream *mcp.ClientOptions) (via, direct *mcp.ClientSession) {
	t.Helper()
	argv := testbin.EverythingServer(t, "stdio")
	args, _ := json.Marshal(argv[1:])
	f := newFixture(t, "", fmt.Sprintf("server \"everything\" {\n  command = %q\n  args = %s\n}\n", argv[0], args))
	via = f.connectHTTP(t, upstream)

	c := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.CommandTransport{Command: procwatch.DieWithTest(exec.Command(argv[0], argv[1:]...)), TerminateDuration: 200 * time.Millisecond},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return via, cs
}

func TestEverythingResultsArriveIntact(t *testing.T) {
	via, direct := everything(t, nil)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"get-tiny-image", map[string]any{}},
		{"get-structured-content", map[string]any{"location": "New York"}},
		{"get-resource-links", map[string]any{"count": 3}},
		{"get-resource-reference", map[string]any{"resourceType": "Text", "resourceId": 2}},
		{"get-annotated-message", map[string]any{"messageType": "error", "includeImage": true}},
		{"get-sum", map[string]any{"a": 2, "b": 3}},
		{"echo", map[string]any{"message": "hello"}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			want, err := direct.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil {
				t.Fatal(err)
			}
			got := call(t, via, "mcp__everything__"+strings.ReplaceAll(tc.tool, "-", "_"), tc.args)
			if diff := cmp.Diff(withoutClock(wire(t, want)), withoutClock(wire(t, got))); diff != "" {
				t.Errorf("result differs (-direct +gateway):\n%s", diff)
			}
		})
	}
}

// clockTime is a wall-clock time as server-everything writes it into the
// resources it makes ("created at 11:04:05 PM").
var clockTime = regexp.MustCompile(`\b\d{1,2}:\d{2}:\d{2}(\s?[AP]M)?`)

// withoutClock replaces wall-clock times in a decoded JSON value, also
// inside base64 blobs: the direct and the gateway call run at different
// moments and may straddle a second.
func withoutClock(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && k == "blob" {
				if b, err := base64.StdEncoding.DecodeString(s); err == nil {
					v[k] = base64.StdEncoding.EncodeToString(clockTime.ReplaceAll(b, []byte("<time>")))
					continue
				}
			}
			v[k] = withoutClock(e)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = withoutClock(e)
		}
		return v
	case string:
		return clockTime.ReplaceAllString(v, "<time>")
	default:
		return v
	}
}

func TestEverythingProgressArrivesWithTheCallersToken(t *testing.T) {
	progress := make(chan *mcp.ProgressNotificationParams, 16)
	via, _ := everything(t, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		progress <- r.Params
	}})
	params := &mcp.CallToolParams{Name: "mcp__everything__trigger_long_running_operation", Arguments: map[string]any{"duration": 0.3, "steps": 3}}
	params.SetProgressToken(42)
	res, err := via.CallTool(t.Context(), params)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text(res), "Long running operation completed") {
		t.Fatalf("result: %s", text(res))
	}
	for i := 1; i <= 3; i++ {
		n := testwait.Recv(t, progress, "progress notification %d of 3", i)
		// JSON numbers decode as float64.
		if n.ProgressToken != float64(42) || n.Progress != float64(i) || n.Total != 3 {
			t.Errorf("notification %d = %+v", i, n)
		}
	}
}

func TestEverythingDynamicToolsAppearUpstream(t *testing.T) {
	changed := make(chan struct{}, 8)
	via, _ := everything(t, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	// server-everything adds these once it has seen toolgate's
	// elicitation capability, and announces them with list_changed.
	want := []string{"mcp__everything__trigger_elicitation_request", "mcp__everything__trigger_url_elicitation"}
	deadline := time.After(30 * time.Second)
	for {
		got := names(t, via)
		if !slices.ContainsFunc(want, func(n string) bool { return !slices.Contains(got, n) }) {
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("dynamic tools %v never listed upstream: %v", want, got)
		}
	}
}

func TestEverythingLogMessagesAreForwarded(t *testing.T) {
	logs := make(chan *mcp.LoggingMessageParams, 16)
	via, _ := everything(t, &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
		logs <- r.Params
	}})
	if err := via.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	call(t, via, "mcp__everything__toggle_simulated_logging", nil)
	if p := testwait.Recv(t, logs, "a forwarded log message"); !strings.HasPrefix(p.Logger, "everything") || !strings.Contains(fmt.Sprint(p.Data), "message") {
		t.Errorf("log message = %+v", p)
	}
}
