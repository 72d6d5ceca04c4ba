package host

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/execution"
	"github.com/toolgate/toolgate/host/ratelimit"
)

// TestLowLayerTranslations: the config blocks reach host/execution and
// host/ratelimit whole, and the two defaults of the output budget agree
// (config's is the configured default, execution's the one a zero Model
// gets).
func TestLowLayerTranslations(t *testing.T) {
	if config.DefaultOutputBudget != execution.DefaultOutputBudget {
		t.Errorf("config.DefaultOutputBudget = %d, execution.DefaultOutputBudget = %d; they must agree",
			config.DefaultOutputBudget, execution.DefaultOutputBudget)
	}
	m := config.Model{ImageInput: true, AudioInput: true, OutputBudgetBytes: 500}
	if diff := cmp.Diff(execution.Model{ImageInput: true, AudioInput: true, OutputBudgetBytes: 500}, executionModel(m)); diff != "" {
		t.Errorf("executionModel (-want +got):\n%s", diff)
	}
	blocks := []config.Limit{{
		Callers: []string{"ci-*"}, Tools: []string{"mcp__demo__*"}, PerCaller: true, PerTool: true,
		Calls: 10, Period: time.Minute, Burst: 3,
		DeclRange: hcl.Range{Filename: "config.hcl", Start: hcl.Pos{Line: 12}},
	}}
	want := []ratelimit.Limit{{
		Callers: []string{"ci-*"}, Tools: []string{"mcp__demo__*"}, PerCaller: true, PerTool: true,
		Calls: 10, Period: time.Minute, Burst: 3, Where: "config.hcl:12",
	}}
	if diff := cmp.Diff(want, rateLimits(blocks)); diff != "" {
		t.Errorf("rateLimits (-want +got):\n%s", diff)
	}
}
