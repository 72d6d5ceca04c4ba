package mcpclient

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bufferRWC is what a server wrote (in) and what the host sends (out).
// Writes land a byte at a time, so writes that are not serialized would
// interleave in out.
type bufferRWC struct {
	in io.Reader

	mu     sync.Mutex
	out    bytes.Buffer
	closes int
}

func (b *bufferRWC) Read(p []byte) (int, error) { return b.in.Read(p) }

func (b *bufferRWC) Write(p []byte) (int, error) {
	for _, c := range p {
		b.mu.Lock()
		b.out.WriteByte(c)
		b.mu.Unlock()
		runtime.Gosched()
	}
	return len(p), nil
}

func (b *bufferRWC) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closes++
	return nil
}

func dialStdio(t *testing.T, serverOutput string, router *readRouter) (*stdioConn, *bufferRWC) {
	t.Helper()
	rwc := &bufferRWC{in: strings.NewReader(serverOutput)}
	conn, err := (&stdioTransport{rwc: rwc, router: router, secrets: []string{"s3cr3t-from-env"}}).Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return conn.(*stdioConn), rwc
}

// readAll reads messages until the stream ends and returns them with the
// error that ended it.
func readAll(conn *stdioConn) ([]jsonrpc.Message, error) {
	var msgs []jsonrpc.Message
	for {
		msg, err := conn.Read(context.Background())
		if err != nil {
			return msgs, err
		}
		msgs = append(msgs, msg)
	}
}

func TestStdioFraming(t *testing.T) {
	long := strings.Repeat("x", 200<<10) // past the 64 KiB read buffer
	output := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" +
		"\n   \r\n" + // blank lines between messages are tolerated
		`[{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","method":"notifications/message","params":{}}]` + "\n" +
		`{"jsonrpc":"2.0","id":3,"result":{"text":"` + long + `"}}` + "\n" +
		`{"jsonrpc":"2.0","id":4,"result":{}}` // the last one may lack its newline
	conn, _ := dialStdio(t, output, &readRouter{})
	msgs, err := readAll(conn)
	if err != io.EOF {
		t.Fatalf("stream ended with %v, want io.EOF", err)
	}
	var got []string
	for _, m := range msgs {
		switch m := m.(type) {
		case *jsonrpc.Response:
			got = append(got, "response "+idString(m.ID))
			if m.ID.Raw() == int64(3) && len(m.Result) < len(long) {
				t.Errorf("long response was cut to %d bytes", len(m.Result))
			}
		case *jsonrpc.Request:
			got = append(got, "notification "+m.Method)
		}
	}
	want := []string{"response 1", "response 2", "notification notifications/message", "response 3", "response 4"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("messages = %v\nwant       %v", got, want)
	}
}

func idString(id jsonrpc.ID) string { return fmt.Sprint(id.Raw()) }

func TestStdioRejectsBrokenOutput(t *testing.T) {
	const hint = "a stdio server must write only MCP messages to stdout and its logs to stderr"
	longToken := strings.Repeat("T", 300)
	for name, tc := range map[string]struct {
		output string
		want   []string
		never  []string
	}{
		"a log line": {"hello from a server that logs to stdout\n",
			[]string{`stdout line "hello from a server that logs to stdout" is not a JSON-RPC message (not JSON)`, hint}, nil},
		"a bracketed log line": {"[INFO] server started\n",
			[]string{`stdout line "[INFO] server started" is not a JSON-RPC message (not JSON)`, hint}, nil},
		"a secret the cut would split": {`debug: config {"api_key": "` + longToken + `"}` + "\n",
			[]string{"[REDACTED]", "is not a JSON-RPC message"}, []string{"TTTT"}},
		"a token printed as text":        {"GITHUB_TOKEN: ghp_abcdefghijklmnop\n", []string{"[REDACTED]"}, []string{"ghp_"}},
		"a secret from the server's env": {"using s3cr3t-from-env now\n", []string{"using [REDACTED] now"}, []string{"s3cr3t"}},
		"a long line is cut":             {strings.Repeat("x", 500) + "\n", []string{strings.Repeat("x", previewRunes) + "…"}, []string{strings.Repeat("x", previewRunes+1)}},
		"json, not json-rpc":             {`{"hello": 1}` + "\n", []string{`stdout line "{\"hello\": 1}" is JSON but not a JSON-RPC 2.0 message`}, nil},
		"empty batch":                    {"[]\n", []string{"an empty JSON-RPC batch"}, nil},
		"bad batch":                      {`[{"jsonrpc":"2.0","id":1,"result":{}}, 7]` + "\n", []string{`reading a batch from the server: element "7" is JSON but not a JSON-RPC 2.0 message`}, nil},
		"too long":                       {`{"jsonrpc":"2.0","id":1,"result":"` + strings.Repeat("y", maxStdioMessage+1) + `"}` + "\n", []string{"exceeds"}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			conn, _ := dialStdio(t, tc.output, &readRouter{})
			_, err := readAll(conn)
			if err == nil || err == io.EOF {
				t.Fatalf("error = %v, want a reading error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
			for _, n := range tc.never {
				if strings.Contains(err.Error(), n) {
					t.Errorf("error %q\ncontains %q", err, n)
				}
			}
		})
	}
}

// A message of exactly the limit is read: the limit is on the message,
// not its line ending.
func TestStdioReadsAMessageOfExactlyTheLimit(t *testing.T) {
	head, tail := `{"jsonrpc":"2.0","id":1,"result":"`, `"}`
	msg := head + strings.Repeat("z", maxStdioMessage-len(head)-len(tail)) + tail
	conn, _ := dialStdio(t, msg+"\r\n", &readRouter{})
	if _, err := conn.Read(t.Context()); err != nil {
		t.Fatalf("a %d-byte message: %v", len(msg), err)
	}
}

// A progress notification reaches its caller while it is read — before the
// result that follows it can be handed to anyone.
func TestStdioDeliversProgressBeforeTheNextMessage(t *testing.T) {
	router := &readRouter{}
	var seen []float64
	token := router.register(func(p *mcp.ProgressNotificationParams) { seen = append(seen, p.Progress) })
	output := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"` + token + `","progress":1}}` + "\n" +
		`[{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"` + token + `","progress":2}},{"jsonrpc":"2.0","id":9,"result":{}}]` + "\n"
	conn, _ := dialStdio(t, output, router)
	if _, err := conn.Read(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0] != 1 {
		t.Fatalf("after the first message progress seen = %v, want [1]", seen)
	}
	if _, err := conn.Read(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 {
		t.Fatalf("progress inside a batch was not delivered before its result: %v", seen)
	}
}

func TestStdioWritesWholeLinesConcurrently(t *testing.T) {
	conn, rwc := dialStdio(t, "", &readRouter{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				id, err := jsonrpc.MakeID(float64(g*100 + i))
				if err != nil {
					t.Error(err)
					return
				}
				if err := conn.Write(t.Context(), &jsonrpc.Request{ID: id, Method: "tools/list"}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(rwc.out.String(), "\n"), "\n")
	if len(lines) != 160 {
		t.Fatalf("wrote %d lines, want 160", len(lines))
	}
	for _, l := range lines {
		if _, err := jsonrpc.DecodeMessage([]byte(l)); err != nil {
			t.Fatalf("line %q is not one whole message: %v", l, err)
		}
	}
}

// pipeRWC is a process whose stdout stays open until Close, as a live
// server's does.
type pipeRWC struct {
	r      *io.PipeReader
	w      *io.PipeWriter
	closes atomic.Int32
}

func (p *pipeRWC) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *pipeRWC) Write(b []byte) (int, error) { return len(b), nil }
func (p *pipeRWC) Close() error {
	p.closes.Add(1)
	return p.w.CloseWithError(io.EOF)
}

func TestStdioCloseEndsAPendingReadOnce(t *testing.T) {
	r, w := io.Pipe()
	rwc := &pipeRWC{r: r, w: w}
	conn, err := (&stdioTransport{rwc: rwc, router: &readRouter{}}).Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// A batch leaves a message queued; after Close it must not be read.
	go func() {
		_, _ = w.Write([]byte(`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]` + "\n"))
	}()
	if _, err := conn.Read(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if err := conn.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if _, err := conn.Read(t.Context()); err != io.EOF {
		t.Fatalf("Read after Close = %v, want io.EOF", err)
	}

	// A Read blocked on a silent server returns when the connection closes.
	r, w = io.Pipe()
	rwc = &pipeRWC{r: r, w: w}
	conn, _ = (&stdioTransport{rwc: rwc, router: &readRouter{}}).Connect(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := conn.Read(context.Background())
		done <- err
	}()
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != io.EOF {
		t.Fatalf("pending Read after Close = %v, want io.EOF", err)
	}
	if n := rwc.closes.Load(); n != 1 {
		t.Fatalf("the process's stdio was closed %d times, want 1", n)
	}
}

// TestStdioIgnoresStrayResponses: a response with "id": null or no id at
// all answers nothing; it is counted and skipped, alone or in a batch, and
// the messages around it are still delivered.
func TestStdioIgnoresStrayResponses(t *testing.T) {
	output := `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}` + "\n" +
		`{"jsonrpc":"2.0","result":{}}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" +
		`[{"jsonrpc":"2.0","id":null,"result":{}}]` + "\n" +
		`[{"jsonrpc":"2.0","result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]` + "\n"
	rwc := &bufferRWC{in: strings.NewReader(output)}
	var strays atomic.Int64
	conn, err := (&stdioTransport{rwc: rwc, router: &readRouter{}, strays: &strays}).Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := readAll(conn.(*stdioConn))
	if err != io.EOF {
		t.Fatalf("reading ended with %v, want EOF: stray responses must not end the connection", err)
	}
	var ids []string
	for _, m := range msgs {
		ids = append(ids, idString(m.(*jsonrpc.Response).ID))
	}
	if !slices.Equal(ids, []string{"1", "2"}) {
		t.Errorf("delivered responses %v, want [1 2]", ids)
	}
	if got := strays.Load(); got != 4 {
		t.Errorf("counted %d stray responses, want 4", got)
	}
}
