package host_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolgate/toolgate/host/events"
	"github.com/toolgate/toolgate/host/exposure"
)

// BenchmarkHookOverhead measures what one call costs with a permission
// hook or the Guardian in the approval chain, against the same call with no
// hook, all in the same run (the hosts alternate in blocks of 50 calls).
// The tool asks for approval (mode prompt), so the chain reaches the hook
// or the reviewer; in the baseline the tool is auto-approved.
func BenchmarkHookOverhead(b *testing.B) {
	script := filepath.Join(b.TempDir(), "allow.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat >/dev/null\nprintf '%s\\n' '{\"hookSpecificOutput\":{\"hookEventName\":\"PermissionRequest\",\"decision\":{\"behavior\":\"allow\"}}}'\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	setups := []struct {
		name string
		s    setup
	}{
		{"none", setup{body: `tool "echo" { approval_mode = "approve" }`}},
		{"policy", setup{body: `tool "echo" { approval_mode = "prompt" }`, top: `
plugin "policy" {
  kind = "hook"
  path = "{{BIN:plugins/toolgate-hook-policy}}"
  config {
    default = "allow"
  }
}`}},
		{"command", setup{body: `tool "echo" { approval_mode = "prompt" }`, top: `
plugin "command" {
  kind   = "hook"
  path   = "{{BIN:plugins/toolgate-hook-command}}"
  events = ["PermissionRequest"]
  config {
    command = ["` + script + `"]
  }
}`}},
		{"guardian", setup{body: `tool "echo" { approval_mode = "prompt" }`, top: `
approval { reviewer = "guardian" }
plugin "guardian" {
  kind = "guardian"
  path = "{{BIN:plugins/toolgate-guardian}}"
  config {
    engine = "rules"
  }
}`}},
	}
	steps := make([]*exposure.Step, len(setups))
	for i, su := range setups {
		f := startHost(b, su.s)
		steps[i] = f.h.NewStep("")
		// Warm: start plugins, fill caches.
		for range 5 {
			if r := steps[i].Call(b.Context(), exposure.CallRequest{Name: "mcp__demo__echo", Arguments: []byte(`{"text":"x"}`)}); r.Status != events.CallCompleted {
				b.Fatalf("%s: %s", su.name, r.Output().Text)
			}
		}
	}
	times := make([][]time.Duration, len(setups))
	const block = 50
	for i := 0; b.Loop(); i++ {
		k := (i / block) % len(setups)
		t0 := time.Now()
		steps[k].Call(b.Context(), exposure.CallRequest{Name: "mcp__demo__echo", Arguments: []byte(`{"text":"x"}`)})
		times[k] = append(times[k], time.Since(t0))
	}
	for k := range setups {
		if len(times[k]) == 0 {
			b.Skip("run with -benchtime of at least 200x to measure every setup")
		}
	}
	reportPath(b, "none", times[0])
	for k, su := range setups[1:] {
		reportAgainst(b, su.name, times[k+1], times[0])
	}
}
