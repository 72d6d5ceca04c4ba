package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/procwatch"
	"github.com/toolgate/toolgate/internal/testwait"
)

// generousListWait makes a session's first list wait until every server
// ended its first start (it answers as soon as they have): what a
// one-shot client lists is then the same every run.
const generousListWait = "serve {\n  initial_list_wait = \"5m\"\n}\n"

// TestServeFirstListWaitsForServersStillStarting: a client that starts
// toolgate serve and lists once (a script, inspector --cli) gets the
// tools of a server that was still starting when it asked, because its
// first tools/list waits (up to initial_list_wait) for the server to
// settle.
func TestServeFirstListWaitsForServersStillStarting(t *testing.T) {
	g := newGate(t)
	cfg := writeConfig(t, directExposure+generousListWait,
		demoServer(t, "fast", filepath.Join(t.TempDir(), "calls"), ""),
		demoServer(t, "slow", filepath.Join(t.TempDir(), "calls"), "", "--initialize-gate", g.addr()))
	p := startServe(t, nil, "--log-level", "debug", "--config", cfg)
	waiting := make(chan error, 1)
	go func() {
		_, err := procwatch.WaitLine(t.Context(), p.stderr, regexp.MustCompile(`the first list waits for servers still starting`))
		waiting <- err
	}()
	held := g.waiting(t) // slow is in its handshake, and stays there

	c := mcp.NewClient(&mcp.Implementation{Name: "one-shot", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	type listing struct {
		names []string
		err   error
	}
	listed := make(chan listing, 1)
	go func() {
		res, err := cs.ListTools(t.Context(), nil)
		var l listing
		l.err = err
		if res != nil {
			for _, tl := range res.Tools {
				l.names = append(l.names, tl.Name)
			}
		}
		listed <- l
	}()
	select {
	case l := <-listed:
		t.Fatalf("the first tools/list was answered while slow was still starting (%v, %v): it should wait for it", l.names, l.err)
	case err := <-waiting:
		if err != nil {
			t.Fatalf("toolgate never said the first list waits: %v", err)
		}
	}
	if _, err := held.Write([]byte{1}); err != nil { // slow may finish its handshake now
		t.Fatal(err)
	}
	l := testwait.Recv(t, listed, "the first tools/list to come back after slow started")
	if l.err != nil {
		t.Fatal(l.err)
	}
	if !slices.Contains(l.names, "mcp__fast__echo") || !slices.Contains(l.names, "mcp__slow__echo") {
		t.Fatalf("first tools/list = %v, want the tools of fast and of slow, which started while it waited", l.names)
	}
}

// TestServeOffersResourcesOfAServerStillStarting: a session that starts
// while a server offering resources and prompts is still starting
// declares resources, prompts and completions (and so does
// server/discover, which opens no session), and gets that server's
// resources and prompts, announced with list_changed, once it is ready.
// Capabilities are fixed at initialize: declared later would be never.
func TestServeOffersResourcesOfAServerStillStarting(t *testing.T) {
	g := newGate(t)
	cfg := writeConfig(t, directExposure+"serve {\n  initial_list_wait = 0\n}\n",
		demoServer(t, "fast", filepath.Join(t.TempDir(), "calls"), ""),
		demoServer(t, "slow", filepath.Join(t.TempDir(), "calls"), "", "--resources", "2", "--initialize-gate", g.addr()))
	p := startServe(t, nil, "--http", "127.0.0.1:0", "--config", cfg)
	url := p.url(t)
	held := g.waiting(t) // slow is in its handshake, and stays there

	resChanged := make(chan struct{}, 16)
	promptsChanged := make(chan struct{}, 16)
	cs := connectServe(t, url, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { resChanged <- struct{}{} },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { promptsChanged <- struct{}{} },
	})
	checkCaps := func(what string, c *mcp.ServerCapabilities) {
		t.Helper()
		if c == nil || c.Resources == nil || !c.Resources.Subscribe || !c.Resources.ListChanged ||
			c.Prompts == nil || !c.Prompts.ListChanged || c.Completions == nil {
			t.Fatalf("%s while slow (resources, prompts, completions) starts: capabilities %s, want resources (subscribe, listChanged), prompts (listChanged) and completions",
				what, mustJSON(t, c))
		}
	}
	checkCaps("initialize", cs.InitializeResult().Capabilities)
	checkCaps("server/discover", discover(t, url))

	if _, err := held.Write([]byte{1}); err != nil { // slow may finish its handshake now
		t.Fatal(err)
	}
	for {
		res, err := cs.ListResources(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(res.Resources, func(r *mcp.Resource) bool { return r.URI == "demo://doc/00001" }) {
			break
		}
		testwait.Recv(t, resChanged, "notifications/resources/list_changed bringing slow's resources; last list %s", mustJSON(t, res.Resources))
	}
	for {
		res, err := cs.ListPrompts(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(res.Prompts, func(p *mcp.Prompt) bool { return strings.HasSuffix(p.Name, "greet") }) {
			break
		}
		testwait.Recv(t, promptsChanged, "notifications/prompts/list_changed bringing slow's prompts; last list %s", mustJSON(t, res.Prompts))
	}
	r, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "demo://doc/00001"})
	if err != nil || len(r.Contents) == 0 {
		t.Fatalf("reading slow's resource once it is ready: %v %v", r, err)
	}
}

// discover asks toolgate serve at url for server/discover (2026-07-28),
// which no session answers, and returns the capabilities it declares.
func discover(t *testing.T, url string) *mcp.ServerCapabilities {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"discover","version":"1"}}}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "server/discover")
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	// The answer is JSON or one SSE event carrying it.
	msg := raw
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			msg = []byte(d)
		}
	}
	var out struct {
		Result *struct {
			Capabilities *mcp.ServerCapabilities `json:"capabilities"`
		} `json:"result"`
	}
	if err := json.Unmarshal(msg, &out); err != nil || out.Result == nil {
		t.Fatalf("server/discover answered %d %q: %v", resp.StatusCode, raw, err)
	}
	return out.Result.Capabilities
}
