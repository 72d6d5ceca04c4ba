package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/internal/testwait"
)

// writeConfig writes a config with the given server blocks and returns
// its path.
func writeConfig(t *testing.T, top string, servers ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "toolgate.hcl")
	if err := os.WriteFile(path, []byte(top+"\n"+strings.Join(servers, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// serveProcess is a running `toolgate serve`.
type serveProcess struct {
	cmd    *exec.Cmd
	stderr io.Reader
	stdin  io.WriteCloser
	stdout io.ReadCloser
	exited chan error

	// What toolgate wrote to stderr, once waitLine started reading it.
	readStderr sync.Once
	mu         sync.Mutex
	lines      []string
	more       chan struct{} // closed when a line arrives or stderr ends
	eof        bool
}

func startServe(t *testing.T, env []string, args ...string) *serveProcess {
	t.Helper()
	cmd := procwatch.DieWithTest(exec.Command(testbin.Path(t, "toolgate"), append([]string{"serve"}, args...)...))
	cmd.Env = append(os.Environ(), env...)
	// Our own pipes, not StderrPipe/StdoutPipe: cmd.Wait (below, as soon
	// as the process exits) closes those, and a test still reading what
	// toolgate wrote before exiting would lose it.
	stderr, stderrW := pipe(t)
	stdout, stdoutW := pipe(t)
	cmd.Stderr, cmd.Stdout = stderrW, stdoutW
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	err = cmd.Start()
	_ = stderrW.Close() // the child has its copies
	_ = stdoutW.Close()
	if err != nil {
		t.Fatal(err)
	}
	p := &serveProcess{cmd: cmd, stderr: stderr, stdin: stdin, stdout: stdout, exited: make(chan error, 1)}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.exited
	})
	return p
}

// pipe returns an OS pipe whose read end the test closes at cleanup.
func pipe(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r, w
}

// url waits for the line that says where toolgate serves.
func (p *serveProcess) url(t *testing.T) string {
	t.Helper()
	return p.waitLine(t, regexp.MustCompile(`at (http://\S+) \(Streamable HTTP\)`))
}

// waitLine waits for a stderr line matching re, among every line
// toolgate wrote so far or writes later, and returns its last submatch
// (the whole match without one). Once used, stderr is read by it alone.
func (p *serveProcess) waitLine(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	p.readStderr.Do(func() {
		p.more = make(chan struct{})
		go p.scanStderr()
	})
	for i := 0; ; {
		p.mu.Lock()
		lines, more, eof := p.lines, p.more, p.eof
		p.mu.Unlock()
		for ; i < len(lines); i++ {
			if m := re.FindStringSubmatch(lines[i]); m != nil {
				return m[len(m)-1]
			}
		}
		if eof {
			t.Fatalf("toolgate serve wrote no line matching %q; it wrote:\n%s", re, strings.Join(lines, "\n"))
		}
		testwait.Recv(t, more, "a line matching %q; toolgate serve wrote:\n%s", re, strings.Join(lines, "\n"))
	}
}

func (p *serveProcess) scanStderr() {
	sc := bufio.NewScanner(p.stderr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		p.mu.Lock()
		p.lines = append(p.lines, sc.Text())
		close(p.more)
		p.more = make(chan struct{})
		p.mu.Unlock()
	}
	p.mu.Lock()
	p.eof = true
	close(p.more)
	p.mu.Unlock()
}

// exitCode waits for the process to exit and returns its code.
func (p *serveProcess) exitCode(t *testing.T) int {
	t.Helper()
	err := testwait.Recv(t, p.exited, "toolgate serve to exit")
	p.exited <- err // for the cleanup
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// descendants returns the live processes below pid, children first.
func descendants(pid int) []int {
	var out []int
	for _, c := range procwatch.Children(pid) {
		out = append(out, c)
		out = append(out, descendants(c)...)
	}
	return out
}

func TestInterruptStopsServeAndEveryProcessItStarted(t *testing.T) {
	for _, mode := range []string{"http", "stdio"} {
		t.Run(mode, func(t *testing.T) {
			fifo, lines, stop, err := procwatch.LineFIFO(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(stop)
			cfg := writeConfig(t, "",
				demoServer(t, "demo", fifo, "", "--spawn-child"),
				demoServer(t, "files", filepath.Join(t.TempDir(), "calls"), ""))
			var (
				p         *serveProcess
				transport mcp.Transport
			)
			if mode == "http" {
				p = startServe(t, nil, "--http", "127.0.0.1:0", "--config", cfg)
				tr := &http.Transport{}
				t.Cleanup(tr.CloseIdleConnections)
				transport = &mcp.StreamableClientTransport{Endpoint: p.url(t), HTTPClient: &http.Client{Transport: tr}, MaxRetries: -1}
			} else {
				p = startServe(t, nil, "--config", cfg)
				go func() { _, _ = io.Copy(io.Discard, p.stderr) }()
				transport = &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}
			}
			changed := make(chan struct{}, 16)
			c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
			cs, err := c.Connect(t.Context(), transport, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cs.Close() })
			// serve answers before its servers are ready: wait for demo's.
			waitTool(t, cs, changed, "mcp__demo__slow")
			// A call in flight must not hold the shutdown.
			go func() {
				_, _ = cs.CallTool(context.WithoutCancel(t.Context()), &mcp.CallToolParams{Name: "mcp__demo__slow", Arguments: map[string]any{"ms": 60000}})
			}()
			waitEvent(t, lines, "call", "slow")
			pids := descendants(p.cmd.Process.Pid)
			if len(pids) < 3 {
				t.Fatalf("expected two servers and a grandchild below toolgate, found %v", pids)
			}
			if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			if code := p.exitCode(t); code != 0 {
				t.Errorf("exit code %d after Ctrl-C, want 0", code)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			for _, pid := range pids {
				if err := procwatch.WaitGone(ctx, pid); err != nil {
					t.Errorf("process %d outlived toolgate serve: %v", pid, err)
				}
			}
		})
	}
}

func TestServeRefusesUnsafeListenersAndNameConflicts(t *testing.T) {
	demo := demoServer(t, "demo", filepath.Join(t.TempDir(), "calls"), "")
	for _, tt := range []struct {
		name string
		cfg  string
		args []string
		want string
	}{
		{"all interfaces without a token", writeConfig(t, "", demo), []string{"--http", "0.0.0.0:0"}, "refusing to serve on 0.0.0.0:0 without a bearer token"},
		{"a token variable that is not set", writeConfig(t, "serve {\n  token_env_var = \"TG_UNSET_TOKEN\"\n}", demo), []string{"--http", "127.0.0.1:0"}, "$TG_UNSET_TOKEN is empty or unset"},
		{"two servers claim one name", writeConfig(t, "",
			demoServer(t, "alpha", filepath.Join(t.TempDir(), "a"), "prefix = false"),
			demoServer(t, "beta", filepath.Join(t.TempDir(), "b"), "prefix = false")),
			[]string{"--http", "127.0.0.1:0"}, `claimed by tool "echo" of server "alpha"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := startServe(t, nil, append(tt.args, "--config", tt.cfg)...)
			stderr, _ := io.ReadAll(p.stderr)
			if code := p.exitCode(t); code != 2 {
				t.Errorf("exit code %d, want 2 (a configuration error)\n%s", code, stderr)
			}
			if !strings.Contains(string(stderr), tt.want) {
				t.Errorf("stderr lacks %q:\n%s", tt.want, stderr)
			}
		})
	}
}

func TestServeWithATokenAnswersOnlyRequestsThatCarryIt(t *testing.T) {
	cfg := writeConfig(t, "serve {\n  token_env_var = \"TG_TEST_TOKEN\"\n}", demoServer(t, "demo", filepath.Join(t.TempDir(), "calls"), ""))
	p := startServe(t, []string{"TG_TEST_TOKEN=s3cret-token"}, "--http", "0.0.0.0:0", "--config", cfg)
	u := p.url(t)
	_, port, _ := strings.Cut(strings.TrimPrefix(u, "http://"), ":")
	local := "http://127.0.0.1:" + port
	if status, _ := post(t, local, nil); status != http.StatusUnauthorized {
		t.Errorf("without the token: status %d, want 401", status)
	}
	if status, body := post(t, local, map[string]string{"Authorization": "Bearer s3cret-token"}); status != http.StatusOK {
		t.Errorf("with the token: status %d: %s", status, body)
	}
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := p.exitCode(t); code != 0 {
		t.Errorf("exit code %d", code)
	}
}

func TestInspectorListsAndCallsToolsThroughServe(t *testing.T) {
	interop := testbin.Interop(t)
	node := testbin.Node(t)
	cli := filepath.Join(interop, "node_modules", "@modelcontextprotocol", "inspector-cli", "build", "index.js")
	// The Inspector CLI lists (or calls) once: its first request waits
	// for demo to start (generousListWait).
	cfg := writeConfig(t, generousListWait, demoServer(t, "demo", filepath.Join(t.TempDir(), "calls"), ""))
	toolgate := testbin.Path(t, "toolgate")

	inspect := func(t *testing.T, args ...string) map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, append([]string{cli}, args...)...)
		out, err := cmd.Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Fatalf("inspector: %v\n%s\n%s", err, out, ee.Stderr)
			}
			t.Fatalf("inspector: %v", err)
		}
		var v map[string]any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("inspector output %q: %v", out, err)
		}
		return v
	}
	check := func(t *testing.T, target []string) {
		// The inspector reads the target first; what follows -- is
		// appended to it (toolgate's own flags would clash with its).
		list := inspect(t, append([]string{target[0], "--method", "tools/list", "--"}, target[1:]...)...)
		var found bool
		for _, tl := range list["tools"].([]any) {
			if tl.(map[string]any)["name"] == "mcp__demo__echo" {
				found = true
			}
		}
		if !found {
			t.Errorf("tools/list lacks mcp__demo__echo: %v", list)
		}
		res := inspect(t, append([]string{target[0], "--method", "tools/call", "--tool-name", "mcp__demo__add", "--tool-arg", "a=2", "b=3", "--"}, target[1:]...)...)
		if res["isError"] == true || !strings.Contains(mustJSON(t, res["structuredContent"]), `"sum":5`) {
			t.Errorf("add through the gateway: %v", res)
		}
		// The Inspector cannot show forms: a call that needs approval is
		// denied with a text that says how to approve it.
		res = inspect(t, append([]string{target[0], "--method", "tools/call", "--tool-name", "mcp__demo__slow_write", "--tool-arg", "ms=1", "--"}, target[1:]...)...)
		if res["isError"] != true || !strings.Contains(mustJSON(t, res["content"]), "does not support elicitation") {
			t.Errorf("a call needing approval: %v", res)
		}
	}
	t.Run("stdio", func(t *testing.T) {
		check(t, []string{toolgate, "serve", "--config", cfg})
	})
	t.Run("http", func(t *testing.T) {
		p := startServe(t, nil, "--http", "127.0.0.1:0", "--config", cfg)
		check(t, []string{p.url(t)})
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := p.exitCode(t); code != 0 {
			t.Errorf("exit code %d", code)
		}
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
