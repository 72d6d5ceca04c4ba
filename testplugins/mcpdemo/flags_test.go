package mcpdemo

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestEveryFlagIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	help := Usage()
	newFlagSet(&Config{}, io.Discard).VisitAll(func(f *flag.Flag) {
		if f.Name == sleepForeverFlag || f.Name == familyParentFlag {
			if strings.Contains(help, "--"+f.Name) {
				t.Errorf("hidden flag --%s shows in --help", f.Name)
			}
			return
		}
		if !strings.Contains(string(doc), "--"+f.Name) {
			t.Errorf("doc.go does not describe --%s", f.Name)
		}
		if !strings.Contains(help, "--"+f.Name) {
			t.Errorf("--help does not describe --%s", f.Name)
		}
	})
	for _, tool := range defaultToolNames {
		if !strings.Contains(string(doc), tool) || !strings.Contains(help, tool) {
			t.Errorf("default tool %s is missing from doc.go or --help", tool)
		}
	}
}

func TestParseArgsRejectsBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"--nope"}, "not defined"},
		{"positional", []string{"extra"}, "positional"},
		{"negative tools", []string{"--tools", "-1"}, "--tools"},
		{"negative page size", []string{"--page-size", "-2"}, "--page-size"},
		{"unknown protocol", []string{"--protocol-versions", "1999-01-01"}, "unknown version"},
		{"no legacy version left", []string{"--ignore-unknown", "--protocol-versions", "2026-07-28"}, "--ignore-unknown"},
		{"exit code too big", []string{"--exit-immediately", "300"}, "0..255"},
		{"empty name", []string{"--name", ""}, "--name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr strings.Builder
			if _, err := ParseArgs(tt.args, &stderr); err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr %q does not mention %q", stderr.String(), tt.want)
			}
		})
	}
}

func TestIdentityAndCapabilities(t *testing.T) {
	for _, v := range bothVersions {
		t.Run(v.name, func(t *testing.T) {
			cfg := mustConfig(t, "--name", "files", "--instructions", "Use me for files.",
				"--sandbox-capability", "toolgate/sandbox-state", "--sandbox-capability", "codex/sandbox-state-meta")
			init := connect(t, cfg, Env{}, nil, v.version).cs.InitializeResult()
			if init.ServerInfo.Name != "files" || init.Instructions != "Use me for files." {
				t.Errorf("identity = %+v, instructions %q", init.ServerInfo, init.Instructions)
			}
			want := map[string]any{"toolgate/sandbox-state": map[string]any{}, "codex/sandbox-state-meta": map[string]any{}}
			if diff := cmp.Diff(want, init.Capabilities.Experimental); diff != "" {
				t.Errorf("experimental capabilities (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProtocolVersionsRestrictNegotiation(t *testing.T) {
	for _, v := range bothVersions {
		t.Run(v.name, func(t *testing.T) {
			s := connect(t, mustConfig(t, "--protocol-versions", "2025-06-18,2025-03-26"), Env{}, nil, v.version)
			if got := s.cs.InitializeResult().ProtocolVersion; got != "2025-06-18" {
				t.Errorf("negotiated %q, want 2025-06-18", got)
			}
		})
	}
}

func TestFailInitialize(t *testing.T) {
	for _, v := range bothVersions {
		t.Run(v.name, func(t *testing.T) {
			_, err := tryConnect(t, testCtx(t), mustConfig(t, "--fail-initialize"), Env{}, nil, v.version)
			if err == nil || !strings.Contains(err.Error(), failInitializeMessage) {
				t.Errorf("connect error = %v, want %q", err, failInitializeMessage)
			}
		})
	}
}

func TestIgnoreUnknownHangsTheDiscoverProbe(t *testing.T) {
	t.Run("legacy client connects", func(t *testing.T) {
		stderr := newLines()
		s := connect(t, mustConfig(t, "--ignore-unknown"), Env{Stderr: stderr}, nil, legacyVersion)
		if got := s.cs.InitializeResult().ProtocolVersion; got != legacyVersion {
			t.Errorf("negotiated %q", got)
		}
		s.call(t, "echo", map[string]any{"text": "x"})
	})
	t.Run("default probe gets no answer", func(t *testing.T) {
		stderr := newLines()
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		_, err := tryConnect(t, ctx, mustConfig(t, "--ignore-unknown"), Env{Stderr: stderr}, nil, modernVersion)
		if err == nil {
			t.Fatal("default client connected to a server that ignores server/discover")
		}
		stderr.waitContaining(t, `ignoring request "server/discover"`)
	})
}

func TestCrashAfterExitsOnceTheNthResponseIsWritten(t *testing.T) {
	exits := make(chan int, 4)
	s := connect(t, mustConfig(t, "--crash-after", "2"), Env{Exit: func(code int) { exits <- code }}, nil, legacyVersion)
	s.call(t, "echo", map[string]any{"text": "1"})
	select {
	case code := <-exits:
		t.Fatalf("exit(%d) after the first call", code)
	default:
	}
	if got := onlyText(t, s.call(t, "echo", map[string]any{"text": "2"})); got != "2" {
		t.Errorf("second call answered %q", got)
	}
	select {
	case code := <-exits:
		if code != CrashExitCode {
			t.Errorf("exit code %d, want %d", code, CrashExitCode)
		}
	case <-testCtx(t).Done():
		t.Fatal("no exit after the second call")
	}
}

func TestStderrNoiseNamesMethods(t *testing.T) {
	stderr := newLines()
	s := connect(t, mustConfig(t, "--stderr-noise"), Env{Stderr: stderr}, nil, legacyVersion)
	s.tools(t)
	s.call(t, "echo", map[string]any{"text": "x"})
	for _, method := range []string{"initialize", "tools/list", "tools/call"} {
		stderr.waitContaining(t, "received "+method)
	}
}

func TestPagination(t *testing.T) {
	s := connect(t, mustConfig(t, "--no-default-tools", "--tools", "5", "--page-size", "2"), Env{}, nil, legacyVersion)
	page, err := s.cs.ListTools(testCtx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Tools) != 2 || page.NextCursor == "" {
		t.Errorf("first page: %d tools, cursor %q", len(page.Tools), page.NextCursor)
	}
	want := []string{"gen_00001", "gen_00002", "gen_00003", "gen_00004", "gen_00005"}
	if diff := cmp.Diff(want, toolNames(s.tools(t))); diff != "" {
		t.Errorf("all pages (-want +got):\n%s", diff)
	}
}

func TestRepeatCursorNeverEnds(t *testing.T) {
	s := connect(t, mustConfig(t, "--no-default-tools", "--tools", "3", "--page-size", "2", "--repeat-cursor"), Env{}, nil, legacyVersion)
	ctx := testCtx(t)
	first, err := s.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: first.NextCursor})
	if err != nil {
		t.Fatal(err)
	}
	if first.NextCursor != repeatedCursor || second.NextCursor != repeatedCursor {
		t.Errorf("cursors %q then %q, want %q twice", first.NextCursor, second.NextCursor, repeatedCursor)
	}
	if diff := cmp.Diff(toolNames(first.Tools), toolNames(second.Tools)); diff != "" {
		t.Errorf("second page differs from the first (-first +second):\n%s", diff)
	}
}

func TestGeneratedTools(t *testing.T) {
	const n = 2100 // past the 2048 distinct wordings
	s := connect(t, mustConfig(t, "--no-default-tools", "--tools", fmt.Sprint(n)), Env{}, nil, legacyVersion)
	tools := s.tools(t)
	if len(tools) != n {
		t.Fatalf("%d tools, want %d", len(tools), n)
	}
	seen := map[string]string{}
	for i, tool := range tools {
		if want := GeneratedToolName(i + 1); tool.Name != want {
			t.Fatalf("tool %d is %q, want %q", i, tool.Name, want)
		}
		if prev, dup := seen[tool.Description]; dup {
			t.Fatalf("%s and %s share the description %q", prev, tool.Name, tool.Description)
		}
		seen[tool.Description] = tool.Name
		if props, _ := tool.InputSchema.(map[string]any)["properties"].(map[string]any); len(props) == 0 {
			t.Fatalf("%s has no input properties", tool.Name)
		}
	}
	if got := onlyText(t, s.call(t, "gen_00042", nil)); got != "gen_00042 ok" {
		t.Errorf("gen_00042 answered %q", got)
	}
}

func TestNameEdgeCases(t *testing.T) {
	tests := []struct {
		flag string
		want []string
	}{
		{"--long-names", LongToolNames()},
		{"--colliding-names", CollidingToolNames()},
	}
	for _, tt := range tests {
		t.Run(tt.flag, func(t *testing.T) {
			s := connect(t, mustConfig(t, "--no-default-tools", tt.flag), Env{}, nil, legacyVersion)
			got := toolNames(s.tools(t))
			want := slices.Sorted(slices.Values(tt.want))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			for _, name := range tt.want {
				if res := s.call(t, name, nil); res.IsError {
					t.Errorf("%s failed", name)
				}
			}
		})
	}
	if lens := []int{len(LongToolNames()[0]), len(LongToolNames()[1])}; !slices.Equal(lens, []int{130, 200}) {
		t.Errorf("long name lengths %v", lens)
	}
}

func TestHiddenToolAndConnectorMeta(t *testing.T) {
	s := connect(t, mustConfig(t, "--hidden-tool", "--connector-meta"), Env{}, nil, legacyVersion)
	tools := s.tools(t)
	hidden := findTool(t, tools, "hidden_tool")
	if diff := cmp.Diff(map[string]any{"visibility": []any{"app"}}, hidden.Meta["ui"]); diff != "" {
		t.Errorf("hidden_tool _meta.ui (-want +got):\n%s", diff)
	}
	for _, tool := range tools {
		for k, v := range ConnectorMeta() {
			if tool.Meta[k] != v {
				t.Errorf("%s: _meta[%s] = %v, want %v", tool.Name, k, tool.Meta[k], v)
			}
		}
	}
}

func TestAnnotationMatrix(t *testing.T) {
	s := connect(t, mustConfig(t, "--no-default-tools", "--annotation-matrix"), Env{}, nil, legacyVersion)
	tools := s.tools(t)
	if len(tools) != 19 {
		t.Fatalf("%d tools, want 19: %v", len(tools), toolNames(tools))
	}
	if got := findTool(t, tools, "hint_none").Annotations; got != nil {
		t.Errorf("hint_none has annotations %+v", got)
	}
	decode := func(code string) *bool {
		switch code {
		case "1":
			return hint(true)
		case "0":
			return hint(false)
		}
		return nil
	}
	for _, name := range AnnotationMatrixToolNames()[:18] {
		var ro, d, ow string
		if _, err := fmt.Sscanf(strings.ReplaceAll(name, "_", " "), "hint ro%s d%s ow%s", &ro, &d, &ow); err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		want := &mcp.ToolAnnotations{ReadOnlyHint: ro == "1", DestructiveHint: decode(d), OpenWorldHint: decode(ow)}
		if diff := cmp.Diff(want, findTool(t, tools, name).Annotations); diff != "" {
			t.Errorf("%s annotations (-want +got):\n%s", name, diff)
		}
		if got := onlyText(t, s.call(t, name, nil)); got != "ok" {
			t.Errorf("%s answered %q", name, got)
		}
	}
}
