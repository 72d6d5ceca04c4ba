package approval

import (
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/host/config"
)

func hint(b bool) *bool { return &b }

func hintName(h *bool) string {
	if h == nil {
		return "unset"
	}
	return fmt.Sprint(*h)
}

// TestRequiresApprovalMatrix pins the annotation rule for every
// combination of hints in every mode. The auto and writes columns are
// written out by hand from the Codex rules, not computed.
func TestRequiresApprovalMatrix(t *testing.T) {
	type row struct {
		readOnly               bool
		destructive, openWorld *bool
		auto, writes           bool
	}
	rows := []row{
		// readOnly false: only destructive=false AND openWorld=false skips approval in auto.
		{false, nil, nil, true, true},
		{false, nil, hint(true), true, true},
		{false, nil, hint(false), true, true}, // destructive defaults to true
		{false, hint(true), nil, true, true},
		{false, hint(true), hint(true), true, true},
		{false, hint(true), hint(false), true, true},
		{false, hint(false), nil, true, true}, // open world defaults to true
		{false, hint(false), hint(true), true, true},
		{false, hint(false), hint(false), false, true}, // writes ignores destructive
		// readOnly true: not required, unless destructive is explicitly true.
		{true, nil, nil, false, false},
		{true, nil, hint(true), false, false},
		{true, nil, hint(false), false, false},
		{true, hint(true), nil, true, false}, // destructive wins over read-only in auto
		{true, hint(true), hint(true), true, false},
		{true, hint(true), hint(false), true, false},
		{true, hint(false), nil, false, false},
		{true, hint(false), hint(true), false, false},
		{true, hint(false), hint(false), false, false},
	}
	for _, r := range rows {
		ann := &mcp.ToolAnnotations{ReadOnlyHint: r.readOnly, DestructiveHint: r.destructive, OpenWorldHint: r.openWorld}
		name := fmt.Sprintf("readOnly=%v/destructive=%s/openWorld=%s", r.readOnly, hintName(r.destructive), hintName(r.openWorld))
		want := map[config.ApprovalMode]bool{
			config.ModeAuto:    r.auto,
			config.ModePrompt:  true,
			config.ModeWrites:  r.writes,
			config.ModeApprove: false,
		}
		for mode, w := range want {
			t.Run(name+"/"+string(mode), func(t *testing.T) {
				if got := RequiresApproval(mode, ann); got != w {
					t.Errorf("RequiresApproval(%s, %s) = %v, want %v", mode, name, got, w)
				}
			})
		}
	}
	absent := map[config.ApprovalMode]bool{
		config.ModeAuto:    true, // absent annotations mean "may be destructive"
		config.ModePrompt:  true,
		config.ModeWrites:  true,
		config.ModeApprove: false,
		"bogus":            true, // an unknown mode fails closed
		"":                 true,
	}
	for mode, w := range absent {
		t.Run("annotations-nil/"+string(mode), func(t *testing.T) {
			if got := RequiresApproval(mode, nil); got != w {
				t.Errorf("RequiresApproval(%q, nil) = %v, want %v", mode, got, w)
			}
		})
	}
}

func TestAutoApproved(t *testing.T) {
	// Every combination that skips the procedure, written out.
	approved := map[string]bool{
		"untrusted/read-only/approve":        true,
		"untrusted/workspace-write/approve":  true,
		"untrusted/full-access/approve":      true,
		"on-request/read-only/approve":       true,
		"on-request/workspace-write/approve": true,
		"on-request/full-access/approve":     true,
		"never/read-only/approve":            true,
		"never/workspace-write/approve":      true,
		"never/full-access/approve":          true,
		"never/full-access/auto":             true,
		"never/full-access/prompt":           true,
		"never/full-access/writes":           true,
	}
	for _, pol := range []config.Policy{config.PolicyUntrusted, config.PolicyOnRequest, config.PolicyNever} {
		for _, perm := range []config.Permissions{config.PermReadOnly, config.PermWorkspaceWrite, config.PermFullAccess} {
			for _, mode := range []config.ApprovalMode{config.ModeAuto, config.ModePrompt, config.ModeWrites, config.ModeApprove} {
				name := fmt.Sprintf("%s/%s/%s", pol, perm, mode)
				t.Run(name, func(t *testing.T) {
					got := AutoApproved(config.Approval{Policy: pol, Permissions: perm}, mode)
					if got != approved[name] {
						t.Errorf("AutoApproved(%s) = %v, want %v", name, got, approved[name])
					}
				})
			}
		}
	}
}

func TestResolveMode(t *testing.T) {
	for _, tt := range []struct {
		name   string
		server config.Server
		want   config.ApprovalMode
	}{
		{"nothing set", config.Server{}, config.ModeAuto},
		{"server default", config.Server{DefaultToolsApprovalMode: config.ModeWrites}, config.ModeWrites},
		{"tool block wins over server default", config.Server{
			DefaultToolsApprovalMode: config.ModeWrites,
			Tools:                    map[string]config.ToolConfig{"write_file": {ApprovalMode: config.ModeApprove}},
		}, config.ModeApprove},
		{"tool block without a mode falls through", config.Server{
			DefaultToolsApprovalMode: config.ModePrompt,
			Tools:                    map[string]config.ToolConfig{"write_file": {}},
		}, config.ModePrompt},
		{"another tool's block does not apply", config.Server{
			Tools: map[string]config.ToolConfig{"read_file": {ApprovalMode: config.ModeApprove}},
		}, config.ModeAuto},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ResolveMode(tt.server, "write_file"); got != tt.want {
				t.Errorf("ResolveMode = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestChoiceLabels(t *testing.T) {
	want := map[Choice]string{
		ChoiceAllow:        "Allow",
		ChoiceAllowSession: "Allow for this session",
		ChoiceAllowAlways:  "Allow and don't ask me again",
		ChoiceDecline:      "Decline",
		ChoiceCancel:       "Cancel",
		Choice(42):         "Choice(42)",
	}
	for c, w := range want {
		if got := c.String(); got != w {
			t.Errorf("Choice(%d).String() = %q, want %q", int(c), got, w)
		}
	}
	var zero Choice
	if zero != ChoiceDecline {
		t.Errorf("the zero Choice is %v, want Decline (fail closed)", zero)
	}
}
