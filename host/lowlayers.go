package host

import (
	"fmt"
	"slices"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/host/execution"
	"github.com/toolgate/toolgate/host/ratelimit"
)

// The low layers the host wires (host/execution, host/ratelimit) take
// their own option types, not config structs, so they can be used and
// tested without a configuration and do not change when the config
// language does. These are the only translations from config blocks to
// those types (host/gateway translates the auth block for
// host/tokenauth, host/manager the env_vars for host/launch).

// executionModel is the model block as the model projection needs it.
func executionModel(m config.Model) execution.Model {
	return execution.Model{ImageInput: m.ImageInput, AudioInput: m.AudioInput, OutputBudgetBytes: m.OutputBudgetBytes}
}

// rateLimits are serve's limit blocks as token buckets, in config order;
// each names where it is written, for refusal texts.
func rateLimits(blocks []config.Limit) []ratelimit.Limit {
	out := make([]ratelimit.Limit, 0, len(blocks))
	for _, b := range blocks {
		out = append(out, ratelimit.Limit{
			Callers: b.Callers, Tools: b.Tools,
			PerCaller: b.PerCaller, PerTool: b.PerTool,
			Calls: b.Calls, Period: b.Period, Burst: b.Burst,
			Where: fmt.Sprintf("%s:%d", b.DeclRange.Filename, b.DeclRange.Start.Line),
		})
	}
	return out
}

// sameLimit reports whether two limit blocks say the same (where they
// are written does not matter), so a reload keeps their buckets.
func sameLimit(a, b config.Limit) bool {
	return slices.Equal(a.Callers, b.Callers) && slices.Equal(a.Tools, b.Tools) &&
		a.PerCaller == b.PerCaller && a.PerTool == b.PerTool &&
		a.Calls == b.Calls && a.Period == b.Period && a.Burst == b.Burst
}
