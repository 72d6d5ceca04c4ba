package inbox_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/testbin"
)

// served is a real `toolgate serve --http` (bin/toolgate) for a test.
type served struct {
	base   string // http://127.0.0.1:PORT
	stderr *testbin.Buffer
}

// startServe runs bin/toolgate serve on 127.0.0.1:0 with the given
// configuration and waits until it says where it listens. env is added
// to the process's environment.
func startServe(t *testing.T, cfg string, env ...string) *served {
	t.Helper()
	path := filepath.Join(t.TempDir(), "toolgate.hcl")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testbin.Path(t, "toolgate"), "serve", "--http", "127.0.0.1:0", "--config", path, "--log-level", "info")
	cmd.Env = append(os.Environ(), env...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &served{stderr: &testbin.Buffer{}}
	found := make(chan string, 1)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp`)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(s.stderr, line)
			if u := url.FindString(line); u != "" {
				select {
				case found <- strings.TrimSuffix(u, "/mcp"):
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			_ = cmd.Process.Kill() // Windows has no interrupt to send
		}
		<-scanned
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("toolgate serve's stderr:\n%s", s.stderr.String())
		}
	})
	select {
	case s.base = <-found:
	case <-scanned:
		t.Fatalf("toolgate serve ended before listening:\n%s", s.stderr.String())
	case <-time.After(time.Minute):
		t.Fatalf("toolgate serve did not listen within a minute:\n%s", s.stderr.String())
	}
	return s
}

// bearerTransport adds a bearer token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// agent is an upstream MCP client without elicitation: the kind of
// client (Gemini CLI, the Inspector, an unattended run) whose calls the
// inbox holds. progress receives every progress message.
type agent struct {
	cs       *mcp.ClientSession
	progress chan string
}

func connect(t *testing.T, base, token string) *agent {
	t.Helper()
	a := &agent{progress: make(chan string, 64)}
	client := mcp.NewClient(&mcp.Implementation{Name: "unattended-agent", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			select {
			case a.progress <- r.Params.Message:
			default:
			}
		},
	})
	hc := &http.Client{}
	if token != "" {
		hc.Transport = bearerTransport{token}
	}
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	a.cs = cs
	return a
}

type callResult struct {
	text    string
	isError bool
	err     error
}

// call calls a tool on its own goroutine (a held call blocks), asking for
// progress.
func (a *agent) call(ctx context.Context, name string, args map[string]any) <-chan callResult {
	out := make(chan callResult, 1)
	go func() {
		p := &mcp.CallToolParams{Name: name, Arguments: args}
		p.SetProgressToken("p-" + name)
		res, err := a.cs.CallTool(ctx, p)
		if err != nil {
			out <- callResult{err: err}
			return
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		out <- callResult{text: b.String(), isError: res.IsError}
	}()
	return out
}

var approvalID = regexp.MustCompile(`ap-[a-z0-9]{12}`)

// heldID waits for the progress message of a held call and returns the
// approval id it names. A held call repeats its progress while it waits,
// so the ids in except (calls held before) are passed over.
func (a *agent) heldID(t *testing.T, base string, except ...string) string {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case msg := <-a.progress:
			if !strings.Contains(msg, "waiting for approval: "+base+"/approvals/ap-") {
				t.Fatalf("progress message %q does not say where the call waits", msg)
			}
			if id := approvalID.FindString(msg); !slices.Contains(except, id) {
				return id
			}
		case <-deadline:
			t.Fatalf("no newly held call sent progress within a minute (held before: %v)", except)
			return ""
		}
	}
}

func wait(t *testing.T, ch <-chan callResult) callResult {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("call failed: %v", r.err)
		}
		return r
	case <-time.After(time.Minute):
		t.Fatal("the call did not end within a minute")
	}
	return callResult{}
}

// api calls the inbox's JSON API with a bearer token.
func api(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func jsonField(t *testing.T, body, field string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	s, _ := m[field].(string)
	return s
}
