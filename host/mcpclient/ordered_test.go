package mcpclient

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEventStreamsRouteNotificationsOfAnySize: the event-stream watcher
// routes log messages and progress however large and however the bytes
// are split, and leaves results (even large ones) to go-sdk.
func TestEventStreamsRouteNotificationsOfAnySize(t *testing.T) {
	event := func(msg any) string {
		b, err := json.Marshal(msg)
		if err != nil {
			t.Fatal(err)
		}
		return "event: message\r\ndata: " + string(b) + "\r\n\r\n"
	}
	bigLog := strings.Repeat("l", 200<<10)
	stream := event(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
		"params": map[string]any{"level": "info", "data": "small"}}) +
		event(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{
			"content": []any{map[string]any{"type": "text", "text": strings.Repeat("r", 300<<10)}}}}) +
		event(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
			"params": map[string]any{"level": "info", "data": bigLog}}) +
		event(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
			"params": map[string]any{"progressToken": "toolgate-1", "progress": 1}})
	for _, chunk := range []int{1, 7, 4096, 1 << 20} {
		var logs []string
		var progress []float64
		r := &readRouter{log: func(p *mcp.LoggingMessageParams) { logs = append(logs, p.Data.(string)) }}
		r.register(func(p *mcp.ProgressNotificationParams) { progress = append(progress, p.Progress) })
		s := &sseRouter{body: io.NopCloser(&chunked{s: stream, n: chunk}), router: r}
		if _, err := io.Copy(io.Discard, s); err != nil {
			t.Fatal(err)
		}
		if len(logs) != 2 || logs[0] != "small" || logs[1] != bigLog {
			t.Errorf("chunks of %d: %d log messages routed (want the small one and the 200 KiB one)", chunk, len(logs))
		}
		if len(progress) != 1 {
			t.Errorf("chunks of %d: %d progress notifications routed, want 1", chunk, len(progress))
		}
	}
}

// chunked reads s n bytes at a time.
type chunked struct {
	s string
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.s)
	c.s = c.s[n:]
	return n, nil
}
