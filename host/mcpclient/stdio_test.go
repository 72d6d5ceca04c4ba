package mcpclient

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bufferRWC is what a server wrote (in) and what the host sends (out).
type bufferRWC struct {
	in     io.Reader
	out    bytes.Buffer
	closed bool
}

func (b *bufferRWC) Read(p []byte) (int, error)  { return b.in.Read(p) }
func (b *bufferRWC) Write(p []byte) (int, error) { return b.out.Write(p) }
func (b *bufferRWC) Close() error                { b.closed = true; return nil }

func dialStdio(t *testing.T, serverOutput string, router *progressRouter) (*stdioConn, *bufferRWC) {
	t.Helper()
	rwc := &bufferRWC{in: strings.NewReader(serverOutput)}
	conn, err := (&stdioTransport{rwc: rwc, router: router}).Connect(t.Context())
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
	conn, _ := dialStdio(t, output, &progressRouter{})
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
	for name, tc := range map[string]struct {
		output, want string
	}{
		"not json":    {"hello from a server that logs to stdout\n", "reading from the server"},
		"empty batch": {"[]\n", "an empty batch"},
		"bad batch":   {`[{"jsonrpc":"2.0","id":1,"result":{}}, 7]` + "\n", "reading a batch from the server"},
		"too long":    {`{"jsonrpc":"2.0","id":1,"result":"` + strings.Repeat("y", maxStdioMessage+1) + `"}` + "\n", "exceeds"},
	} {
		t.Run(name, func(t *testing.T) {
			conn, _ := dialStdio(t, tc.output, &progressRouter{})
			_, err := readAll(conn)
			if err == nil || err == io.EOF || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// A progress notification reaches its caller while it is read — before the
// result that follows it can be handed to anyone.
func TestStdioDeliversProgressBeforeTheNextMessage(t *testing.T) {
	router := &progressRouter{}
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

func TestStdioWritesOneLinePerMessageAndClosesOnce(t *testing.T) {
	conn, rwc := dialStdio(t, "", &progressRouter{})
	id, err := jsonrpc.MakeID(float64(1))
	if err != nil {
		t.Fatal(err)
	}
	req := &jsonrpc.Request{ID: id, Method: "tools/list"}
	if err := conn.Write(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if err := conn.Write(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(rwc.out.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"method":"tools/list"`) {
		t.Fatalf("wrote %q, want two newline-terminated messages", rwc.out.String())
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if err := conn.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if !rwc.closed {
		t.Fatal("Close did not close the process's stdio")
	}
}
