package mcpdemo

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var defaultToolNames = []string{
	"add", "audio", "big", "delete_file", "echo", "echo_big", "elicit", "elicit_url", "embedded_resource",
	"env", "fail", "image", "mixed", "mutate_tools", "pid", "progress", "resource_link", "slow",
	"slow_write", "structured", "write_file",
}

func TestDefaultToolsAreListedWithTheirAnnotations(t *testing.T) {
	for _, v := range bothVersions {
		t.Run(v.name, func(t *testing.T) {
			s := connect(t, mustConfig(t), Env{}, nil, v.version)
			tools := s.tools(t)
			if diff := cmp.Diff(defaultToolNames, toolNames(tools)); diff != "" {
				t.Errorf("tool names (-want +got):\n%s", diff)
			}
			f, tr := false, true
			wantAnnotations := map[string]*mcp.ToolAnnotations{
				"echo":        {ReadOnlyHint: true},
				"add":         {ReadOnlyHint: true},
				"slow":        {ReadOnlyHint: true},
				"write_file":  {DestructiveHint: &f, OpenWorldHint: &f},
				"delete_file": {DestructiveHint: &tr},
				"slow_write":  nil,
			}
			for name, want := range wantAnnotations {
				if diff := cmp.Diff(want, findTool(t, tools, name).Annotations); diff != "" {
					t.Errorf("%s annotations (-want +got):\n%s", name, diff)
				}
			}
			for _, name := range []string{"add", "structured"} {
				if findTool(t, tools, name).OutputSchema == nil {
					t.Errorf("%s has no outputSchema", name)
				}
			}
		})
	}
}

func TestNoDefaultToolsStillAdvertisesTools(t *testing.T) {
	s := connect(t, mustConfig(t, "--no-default-tools"), Env{}, nil, legacyVersion)
	if tools := s.tools(t); len(tools) != 0 {
		t.Errorf("want no tools, got %v", toolNames(tools))
	}
	if caps := s.cs.InitializeResult().Capabilities; caps.Tools == nil {
		t.Error("tools capability missing; hosts would not list tools")
	}
}

func TestTextTools(t *testing.T) {
	oneMiB := strings.Repeat("x", 1<<20)
	tests := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"echo", "echo", map[string]any{"text": "hello"}, "hello"},
		{"add", "add", map[string]any{"a": 2, "b": 2.5}, "4.5"},
		{"big returns exact bytes", "big", map[string]any{"bytes": 100_000}, BigText(100_000)},
		{"big zero", "big", map[string]any{"bytes": 0}, ""},
		{"echo_big 1 MiB", "echo_big", map[string]any{"data": oneMiB}, oneMiB},
	}
	s := connect(t, mustConfig(t), Env{}, nil, modernVersion)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := s.call(t, tt.tool, tt.args)
			if res.IsError {
				t.Fatalf("isError: %+v", res.Content)
			}
			if got := onlyText(t, res); got != tt.want {
				t.Errorf("text: got %d bytes %.40q, want %d bytes %.40q", len(got), got, len(tt.want), tt.want)
			}
		})
	}
}

func TestBigTextIsExactAndDeterministic(t *testing.T) {
	for _, n := range []int{1, 64, 65, 1 << 20} {
		got := BigText(n)
		if len(got) != n || got != BigText(n) {
			t.Errorf("BigText(%d): len %d", n, len(got))
		}
	}
}

func TestStructuredContent(t *testing.T) {
	s := connect(t, mustConfig(t), Env{}, nil, legacyVersion)
	tests := []struct {
		tool string
		args map[string]any
		want map[string]any
	}{
		{"add", map[string]any{"a": 1, "b": 2}, map[string]any{"sum": 3.0}},
		{"structured", nil, map[string]any{"city": "Paris", "temperature_c": 21.5, "conditions": "sunny"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res := s.call(t, tt.tool, tt.args)
			if diff := cmp.Diff(tt.want, res.StructuredContent); diff != "" {
				t.Errorf("structuredContent (-want +got):\n%s", diff)
			}
			if onlyText(t, res) == "" {
				t.Error("text block is empty; clients without structured content see nothing")
			}
		})
	}
}

func contentTypes(res *mcp.CallToolResult) []string {
	var types []string
	for _, c := range res.Content {
		switch c.(type) {
		case *mcp.TextContent:
			types = append(types, "text")
		case *mcp.ImageContent:
			types = append(types, "image")
		case *mcp.AudioContent:
			types = append(types, "audio")
		case *mcp.ResourceLink:
			types = append(types, "resource_link")
		case *mcp.EmbeddedResource:
			types = append(types, "resource")
		default:
			types = append(types, "other")
		}
	}
	return types
}

func TestContentTools(t *testing.T) {
	tests := []struct {
		tool string
		want []string
	}{
		{"image", []string{"image", "text"}},
		{"audio", []string{"audio"}},
		{"resource_link", []string{"resource_link"}},
		{"embedded_resource", []string{"resource"}},
		{"mixed", []string{"text", "image", "audio", "resource_link", "resource"}},
	}
	s := connect(t, mustConfig(t), Env{}, nil, modernVersion)
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res := s.call(t, tt.tool, nil)
			if diff := cmp.Diff(tt.want, contentTypes(res)); diff != "" {
				t.Fatalf("content types (-want +got):\n%s", diff)
			}
			for _, c := range res.Content {
				switch c := c.(type) {
				case *mcp.ImageContent:
					if c.MIMEType != "image/png" {
						t.Errorf("image mime %q", c.MIMEType)
					}
					if _, err := png.Decode(bytes.NewReader(c.Data)); err != nil {
						t.Errorf("image is not a valid PNG: %v", err)
					}
				case *mcp.AudioContent:
					if c.MIMEType != "audio/wav" || !bytes.HasPrefix(c.Data, []byte("RIFF")) || string(c.Data[8:12]) != "WAVE" {
						t.Errorf("audio is not a WAV: mime %q, % x", c.MIMEType, c.Data[:min(12, len(c.Data))])
					}
				case *mcp.ResourceLink:
					if c.URI == "" || c.Name == "" {
						t.Errorf("resource link lacks uri or name: %+v", c)
					}
				case *mcp.EmbeddedResource:
					if c.Resource == nil || c.Resource.Text == "" {
						t.Errorf("embedded resource has no text: %+v", c.Resource)
					}
				}
			}
		})
	}
}

func TestFailReturnsToolError(t *testing.T) {
	s := connect(t, mustConfig(t), Env{}, nil, legacyVersion)
	res := s.call(t, "fail", map[string]any{"message": "disk on fire"})
	if !res.IsError {
		t.Error("isError = false, want true")
	}
	if got := onlyText(t, res); got != "disk on fire" {
		t.Errorf("text = %q", got)
	}
}

func TestWriteAndDeleteStayUnderRoot(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(filepath.Dir(root), "outside-"+filepath.Base(root))
	s := connect(t, mustConfig(t, "--root", root), Env{}, nil, legacyVersion)

	res := s.call(t, "write_file", map[string]any{"path": "sub/dir/a.txt", "content": "hello"})
	if res.IsError {
		t.Fatalf("write_file failed: %s", onlyText(t, res))
	}
	got, err := os.ReadFile(filepath.Join(root, "sub", "dir", "a.txt"))
	if err != nil || string(got) != "hello" {
		t.Fatalf("file content = %q, %v; want hello", got, err)
	}

	for _, path := range []string{"../" + filepath.Base(outside), outside, "sub/../../x"} {
		t.Run("refuses "+path, func(t *testing.T) {
			res := s.call(t, "write_file", map[string]any{"path": path, "content": "evil"})
			if !res.IsError {
				t.Errorf("isError = false for %q", path)
			}
			if _, err := os.Stat(outside); err == nil {
				t.Errorf("%s was written outside the root", outside)
			}
		})
	}

	if err := os.Symlink(filepath.Dir(root), filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if res := s.call(t, "write_file", map[string]any{"path": "escape/x.txt", "content": "evil"}); !res.IsError {
		t.Error("write through a symlink out of the root succeeded")
	}

	if res := s.call(t, "delete_file", map[string]any{"path": "sub/dir/a.txt"}); res.IsError {
		t.Fatalf("delete_file failed: %s", onlyText(t, res))
	}
	if _, err := os.Stat(filepath.Join(root, "sub", "dir", "a.txt")); !os.IsNotExist(err) {
		t.Errorf("file still there after delete_file: %v", err)
	}
	if res := s.call(t, "delete_file", map[string]any{"path": "missing.txt"}); !res.IsError {
		t.Error("deleting a missing file is not an error")
	}
}

func TestEnvAndPid(t *testing.T) {
	t.Setenv("MCPDEMO_TEST_SET", "yes")
	s := connect(t, mustConfig(t), Env{}, nil, legacyVersion)
	got := decodeJSON[map[string]any](t, onlyText(t, s.call(t, "env", map[string]any{"names": []string{"MCPDEMO_TEST_SET", "MCPDEMO_TEST_UNSET"}})))
	cwd, _ := os.Getwd()
	want := map[string]any{"MCPDEMO_TEST_SET": "yes", "MCPDEMO_TEST_UNSET": nil, "cwd": cwd}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	pid := decodeJSON[map[string]int](t, onlyText(t, s.call(t, "pid", nil)))
	if diff := cmp.Diff(map[string]int{"pid": os.Getpid(), "ppid": os.Getppid()}, pid); diff != "" {
		t.Errorf("pid (-want +got):\n%s", diff)
	}
}

func TestSlowReportsTiming(t *testing.T) {
	s := connect(t, mustConfig(t), Env{}, nil, legacyVersion)
	for _, tool := range []string{"slow", "slow_write"} {
		timing := decodeJSON[SlowTiming](t, onlyText(t, s.call(t, tool, map[string]any{"ms": 1})))
		if timing.Start == 0 || timing.End < timing.Start || timing.PID != os.Getpid() {
			t.Errorf("%s timing = %+v", tool, timing)
		}
	}
}

func TestSlowCancellationIsLogged(t *testing.T) {
	for _, v := range bothVersions {
		t.Run(v.name, func(t *testing.T) {
			log := newLines()
			s := connect(t, mustConfig(t), Env{CallLog: log}, nil, v.version)
			ctx, cancel := context.WithCancel(testCtx(t))
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 600_000}})
				done <- err
			}()
			log.waitContaining(t, `"event":"call"`)
			cancel()
			if err := <-done; err == nil {
				t.Error("cancelled call returned no error")
			}
			line := log.waitContaining(t, `"event":"cancelled"`)
			got := decodeJSON[callLogEntry](t, line)
			if got.Tool != "slow" || got.PID != os.Getpid() {
				t.Errorf("cancel entry = %+v", got)
			}
		})
	}
}

func TestProgressSendsEverySteps(t *testing.T) {
	for _, v := range bothVersions {
		t.Run(v.name, func(t *testing.T) {
			progress := make(chan *mcp.ProgressNotificationParams, 16)
			copts := &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
				progress <- req.Params
			}}
			s := connect(t, mustConfig(t), Env{}, copts, v.version)
			params := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": 3}}
			params.SetProgressToken("tok-1")
			if _, err := s.cs.CallTool(testCtx(t), params); err != nil {
				t.Fatal(err)
			}
			ctx := testCtx(t)
			for want := 1.0; want <= 3; want++ {
				select {
				case p := <-progress:
					if p.ProgressToken != "tok-1" || p.Progress != want || p.Total != 3 {
						t.Errorf("progress %v = %+v", want, p)
					}
				case <-ctx.Done():
					t.Fatalf("progress notification %v never arrived", want)
				}
			}
		})
	}
}

func TestElicitation(t *testing.T) {
	for _, v := range bothVersions {
		t.Run(v.name, func(t *testing.T) {
			requests := make(chan *mcp.ElicitParams, 4)
			copts := &mcp.ClientOptions{
				Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{
					Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{},
				}},
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					requests <- req.Params
					if req.Params.Mode == "url" {
						return &mcp.ElicitResult{Action: "decline"}, nil
					}
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"age": 42, "color": "green"}}, nil
				},
			}
			s := connect(t, mustConfig(t), Env{}, copts, v.version)

			form := decodeJSON[ElicitOutcome](t, onlyText(t, s.call(t, "elicit", map[string]any{"message": "who are you?"})))
			want := ElicitOutcome{Action: "accept", Content: map[string]any{"name": "anon", "age": 42.0, "color": "green"}}
			if diff := cmp.Diff(want, form); diff != "" {
				t.Errorf("elicit outcome (-want +got):\n%s", diff)
			}
			if p := <-requests; p.Message != "who are you?" || p.Mode != "form" {
				t.Errorf("form request = %+v", p)
			}

			url := decodeJSON[ElicitOutcome](t, onlyText(t, s.call(t, "elicit_url", nil)))
			if url.Action != "decline" {
				t.Errorf("elicit_url outcome = %+v", url)
			}
			if p := <-requests; p.Mode != "url" || p.URL != ElicitURL {
				t.Errorf("url request = %+v", p)
			}
		})
	}
}

func TestMutateToolsAnnouncesChanges(t *testing.T) {
	for _, v := range bothVersions {
		t.Run(v.name, func(t *testing.T) {
			changed := make(chan struct{}, 8)
			copts := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				changed <- struct{}{}
			}}
			s := connect(t, mustConfig(t), Env{}, copts, v.version)
			waitChanged := func() {
				t.Helper()
				select {
				case <-changed:
				case <-testCtx(t).Done():
					t.Fatal("no notifications/tools/list_changed")
				}
			}

			s.call(t, "mutate_tools", map[string]any{"add": []string{"late_tool"}})
			waitChanged()
			if !slices.Contains(toolNames(s.tools(t)), "late_tool") {
				t.Fatal("late_tool not listed after mutate_tools add")
			}
			if got := onlyText(t, s.call(t, "late_tool", nil)); got != "ok" {
				t.Errorf("late_tool = %q", got)
			}

			s.call(t, "mutate_tools", map[string]any{"remove": []string{"late_tool", "echo"}})
			waitChanged()
			names := toolNames(s.tools(t))
			if slices.Contains(names, "late_tool") || slices.Contains(names, "echo") {
				t.Errorf("removed tools still listed: %v", names)
			}
		})
	}
}

func TestAddToolAfterInitialized(t *testing.T) {
	changed := make(chan struct{}, 8)
	copts := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}}
	s := connect(t, mustConfig(t, "--no-default-tools", "--add-tool-after-initialized", "arrived"), Env{}, copts, legacyVersion)
	select {
	case <-changed:
	case <-testCtx(t).Done():
		t.Fatal("no notifications/tools/list_changed after initialized")
	}
	if diff := cmp.Diff([]string{"arrived"}, toolNames(s.tools(t))); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestCallLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calls.jsonl")
	s := connect(t, mustConfig(t, "--call-log", path), Env{}, nil, legacyVersion)
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}, Meta: mcp.Meta{"trace": "t-1"}}
	if _, err := s.cs.CallTool(testCtx(t), params); err != nil {
		t.Fatal(err)
	}
	s.call(t, "pid", nil)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	for line := range strings.Lines(string(data)) {
		got = append(got, decodeJSON[map[string]any](t, line))
	}
	pid := float64(os.Getpid())
	want := []map[string]any{
		{"event": "call", "tool": "echo", "arguments": map[string]any{"text": "hi"}, "meta": map[string]any{"trace": "t-1"}, "pid": pid},
		{"event": "call", "tool": "pid", "arguments": map[string]any{}, "pid": pid},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("call log (-want +got):\n%s", diff)
	}
}

func TestCallLogFileIsAppended(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calls.jsonl")
	if err := os.WriteFile(path, []byte("{\"event\":\"earlier\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := connect(t, mustConfig(t, "--call-log", path), Env{}, nil, legacyVersion)
	s.call(t, "echo", map[string]any{"text": "x"})
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(data), "\n"); lines != 2 || !strings.HasPrefix(string(data), `{"event":"earlier"}`) {
		t.Errorf("log was not appended to:\n%s", data)
	}
}

func TestLogMessages(t *testing.T) {
	logged := make(chan *mcp.LoggingMessageParams, 4)
	copts := &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
		logged <- req.Params
	}}
	s := connect(t, mustConfig(t, "--log-messages"), Env{}, copts, legacyVersion)
	if err := s.cs.SetLoggingLevel(testCtx(t), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	s.call(t, "echo", map[string]any{"text": "x"})
	select {
	case p := <-logged:
		data, _ := json.Marshal(p.Data)
		if p.Level != "info" || !strings.Contains(string(data), `"tool":"echo"`) {
			t.Errorf("log message = %+v %s", p, data)
		}
	case <-testCtx(t).Done():
		t.Fatal("no log message for tools/call")
	}
}
