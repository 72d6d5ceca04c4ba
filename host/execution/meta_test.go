package execution_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/execution"
)

func TestMeta(t *testing.T) {
	call := events.Call{CallID: "call-7", SessionID: "sess-1", Server: "files", Tool: "write_file", ModelName: "mcp__files__write_file"}
	base := mcp.Meta{"callId": "call-7", "threadId": "sess-1"}
	ours := map[string]any{"permissions": "workspace-write", "cwd": "/work/my project"}
	codex := map[string]any{"permissionProfile": "workspace-write", "sandboxCwd": "file:///work/my%20project"}
	with := func(extra map[string]any) mcp.Meta {
		m := mcp.Meta{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name string
		caps *mcp.ServerCapabilities
		cwd  string
		ids  bool // call_meta
		want mcp.Meta
	}{
		{name: "no capabilities", caps: nil, cwd: "/work/my project", want: nil},
		{name: "no capabilities, call_meta", caps: nil, cwd: "/work/my project", ids: true, want: base},
		{name: "capabilities without experimental", caps: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}, cwd: "/work/my project", want: nil},
		{
			name: "unrelated experimental capability",
			caps: &mcp.ServerCapabilities{Experimental: map[string]any{"acme/other": map[string]any{}}},
			cwd:  "/work/my project",
			ids:  true,
			want: base,
		},
		{
			name: "toolgate sandbox state",
			caps: &mcp.ServerCapabilities{Experimental: map[string]any{"toolgate/sandbox-state": map[string]any{}}},
			cwd:  "/work/my project",
			want: with(map[string]any{"toolgate/sandbox-state": ours}),
		},
		{
			name: "codex sandbox state",
			caps: &mcp.ServerCapabilities{Experimental: map[string]any{"codex/sandbox-state-meta": map[string]any{}}},
			cwd:  "/work/my project",
			want: with(map[string]any{"codex/sandbox-state-meta": codex}),
		},
		{
			name: "both declared",
			caps: &mcp.ServerCapabilities{Experimental: map[string]any{"toolgate/sandbox-state": map[string]any{}, "codex/sandbox-state-meta": true}},
			cwd:  "/work/my project",
			want: with(map[string]any{"toolgate/sandbox-state": ours, "codex/sandbox-state-meta": codex}),
		},
		{
			name: "no cwd known",
			caps: &mcp.ServerCapabilities{Experimental: map[string]any{"toolgate/sandbox-state": map[string]any{}, "codex/sandbox-state-meta": map[string]any{}}},
			cwd:  "",
			want: with(map[string]any{
				"toolgate/sandbox-state":   map[string]any{"permissions": "workspace-write"},
				"codex/sandbox-state-meta": map[string]any{"permissionProfile": "workspace-write"},
			}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := execution.Meta(call, tt.caps, "workspace-write", tt.cwd, tt.ids)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Meta (-want +got):\n%s", diff)
			}
		})
	}
}
