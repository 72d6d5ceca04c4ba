package mcpclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/toolgate/toolgate/internal/testbin"
)

// answerEchoInEvents makes ts answer each echo call with an event
// stream: a log notification (too deep when deepNotice), then the
// result. A text "deep" gets a result nested 1500 levels. Each data line
// holds at most split bytes of the message, so an event spans many
// data: lines.
func answerEchoInEvents(ts *testServer, deepNotice bool, split int) {
	ts.setAnswer(func(w http.ResponseWriter, r *http.Request, method string) bool {
		if method != "tools/call" {
			return false
		}
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Params struct {
				Arguments struct {
					Text string `json:"text"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			panic(err)
		}
		// The text in blocks of at most split bytes, so that splitJSON
		// finds places to cut; echo reads the first block.
		var blocks []string
		for rest := req.Params.Arguments.Text; ; {
			k := min(split, len(rest))
			text, _ := json.Marshal(rest[:k])
			blocks = append(blocks, `{"type":"text","text":`+string(text)+`}`)
			if rest = rest[k:]; rest == "" {
				break
			}
		}
		result := `{"content":[` + strings.Join(blocks, ",") + `]}`
		if req.Params.Arguments.Text == "deep" {
			result = `{"content":[],"structuredContent":` + strings.Repeat(`{"a":`, 1500) + "{}" + strings.Repeat("}", 1500) + `}`
		}
		notice := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}`
		if deepNotice {
			notice = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":` +
				strings.Repeat("[", 1200) + strings.Repeat("]", 1200) + `}}`
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i, msg := range []string{notice, `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":` + result + `}`} {
			var ev strings.Builder
			fmt.Fprintf(&ev, "id: %d\nevent: message\n", i+1)
			for _, line := range splitJSON(msg, split) {
				fmt.Fprintf(&ev, "data: %s\n", line)
			}
			ev.WriteString("\n")
			_, _ = io.WriteString(w, ev.String())
			w.(http.Flusher).Flush()
		}
		return true
	})
}

// splitJSON cuts msg into pieces of about n bytes, between tokens (never
// inside a string), as a server may spread a message over data: lines.
func splitJSON(msg string, n int) []string {
	var out []string
	start, inString, escaped := 0, false, false
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && i-start >= n && (c == ',' || c == '[' || c == '{'):
			out = append(out, msg[start:i])
			start = i
		}
	}
	return append(out, msg[start:])
}

// TestHTTPEventStreamResultOverTheCapFailsOnlyItsCall is
// TestHTTPResultOverTheCapFailsOnlyItsCall for a server that answers in
// an event stream: the over-cap event is refused before go-sdk decodes
// it, the call fails with the same text, and answers under the cap (on
// one data line or many) still arrive.
func TestHTTPEventStreamResultOverTheCapFailsOnlyItsCall(t *testing.T) {
	for _, split := range []int{1 << 30, 1000} {
		t.Run(fmt.Sprintf("data_lines_of_%d", split), func(t *testing.T) {
			ts := newTestServer(t, true)
			answerEchoInEvents(ts, false, split)
			c := httpClient(t, ts.URL, HTTP{})
			c.opts.MaxResultBytes = 64 << 10
			if err := c.Connect(t.Context()); err != nil {
				t.Fatal(err)
			}
			_, err := echo(t.Context(), c, strings.Repeat("x", 200<<10))
			if err == nil || !strings.Contains(err.Error(), "max_result_bytes = 65536") || !strings.Contains(err.Error(), "before it was decoded") {
				t.Fatalf("an answer over the cap: err = %v", err)
			}
			for _, text := range []string{"small", strings.Repeat("y", 60<<10)} {
				// echo reads the first block of the text
				if got, err := echo(t.Context(), c, text); err != nil || got != text[:min(split, len(text))] {
					t.Fatalf("the session did not survive: %d bytes back, %v", len(got), err)
				}
			}
		})
	}
}

// TestHTTPEventStreamTooDeepCostsOnlyItself is TestHTTPTooDeepCostsOnlyItself
// for answers in an event stream: a too-deep notification is dropped, a
// too-deep result fails its call, and the session goes on.
func TestHTTPEventStreamTooDeepCostsOnlyItself(t *testing.T) {
	ts := newTestServer(t, true)
	answerEchoInEvents(ts, true, 700)
	logs := &testbin.Buffer{}
	c := httpClient(t, ts.URL, HTTP{})
	c.log = hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Warn})
	if err := c.Connect(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, err := echo(t.Context(), c, "deep")
	if err == nil || !strings.Contains(err.Error(), "levels deep, more than the 1000 levels") {
		t.Fatalf("a too-deep answer: err = %v", err)
	}
	if got, err := echo(t.Context(), c, "still here"); err != nil || got != "still here" {
		t.Fatalf("the session did not survive: %q, %v", got, err)
	}
	if !strings.Contains(logs.String(), "dropping a message from the server that nests too deep") {
		t.Errorf("log lacks the dropped notification:\n%s", logs.String())
	}
}

// TestEventGuardPassesEventsVerbatim: what go-sdk reads of events the
// guard has nothing against is what the server sent, byte for byte,
// whatever the reads' sizes.
func TestEventGuardPassesEventsVerbatim(t *testing.T) {
	stream := ": a comment\nretry: 10\n\nid: 1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\n data: \"method\":\"x\"}\r\n\r\n" +
		"data: " + strings.Repeat("z", 200<<10) + "\n\n" + "id: 3\ndata: {}"
	g := newEventGuard(&headerTransport{log: hclog.NewNullLogger()}, io.NopCloser(strings.NewReader(stream)), message{})
	var got bytes.Buffer
	buf := make([]byte, 7)
	for {
		n, err := g.Read(buf)
		got.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if got.String() != stream {
		t.Fatalf("the guard changed the stream: %d bytes in, %d out", len(stream), got.Len())
	}
}

// TestEventGuardRefusesAnOverCapAnswer: the event holding the capped
// call's answer becomes an error response with the event's id: and
// event: lines, and the stream goes on after it.
func TestEventGuardRefusesAnOverCapAnswer(t *testing.T) {
	answer := `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 300<<10) + `"}]}}`
	stream := "id: 9\nevent: message\ndata: " + answer + "\n\ndata: {}\n\n"
	tr := &headerTransport{log: hclog.NewNullLogger(), maxResult: 64 << 10}
	g := newEventGuard(tr, io.NopCloser(strings.NewReader(stream)), message{Method: "tools/call", ID: json.RawMessage("4")})
	got, err := io.ReadAll(io.LimitReader(g, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	head, rest, ok := strings.Cut(string(got), "\n\n")
	if !ok || rest != "data: {}\n\n" {
		t.Fatalf("the stream after the refused event = %q", rest)
	}
	if !strings.HasPrefix(head, "id: 9\nevent: message\ndata: {") {
		t.Fatalf("the replacement event = %q", head)
	}
	var resp struct {
		ID    int
		Error struct{ Message string }
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(head, "id: 9\nevent: message\ndata: ")), &resp); err != nil {
		t.Fatal(err)
	}
	if resp.ID != 4 || !strings.Contains(resp.Error.Message, "max_result_bytes = 65536") {
		t.Fatalf("the replacement = %+v", resp)
	}
}
