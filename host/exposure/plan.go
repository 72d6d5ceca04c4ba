package exposure

import (
	"encoding/json"

	"github.com/toolgate/toolgate/host/config"
	"github.com/toolgate/toolgate/internal/glob"
)

// Deferred tools are registered and callable but not in the model's
// initial list: the model finds them with tool_search.
const Deferred = "deferred"

// Policy is the exposure block plus per-server overrides.
type Policy struct {
	Mode       config.ExposureMode
	DeferCount int       // auto: defer when more than this many tools would be direct
	DeferBytes int       // auto: or when their specs would exceed this many bytes
	NeverDefer glob.List // model-name globs pinned to the direct list
	// Servers holds per-server `exposure` overrides.
	Servers map[string]config.ExposureMode
}

// PolicyFrom reads the exposure settings of cfg.
func PolicyFrom(cfg *config.Config) Policy {
	p := Policy{
		Mode:       cfg.Exposure.Mode,
		DeferCount: cfg.Exposure.DeferCount,
		DeferBytes: cfg.Exposure.DeferBytes,
		NeverDefer: neverDefer(cfg.Exposure.NeverDefer),
		Servers:    map[string]config.ExposureMode{},
	}
	for _, s := range cfg.Servers {
		if s.Exposure != "" {
			p.Servers[s.Name] = s.Exposure
		}
	}
	return p
}

// plan marks each model-visible tool Direct or Deferred, in place:
//
//  1. a never_defer pin (exact model name or glob) keeps a tool direct;
//  2. else the server's own exposure setting decides;
//  3. else the mode: direct, deferred, or auto — deferred when the tools
//     left to decide would be more than DeferCount or weigh more than
//     DeferBytes of spec (name, description, input schema) in the model's
//     context, direct otherwise.
func (p Policy) plan(tools []*Tool) {
	var undecided []*Tool
	count, bytes := 0, 0
	for _, t := range tools {
		if t.Exposure == Hidden {
			continue
		}
		switch {
		case p.pinned(t.ModelName):
			t.Exposure = Direct
		case p.Servers[t.Server] == config.ExposureDirect:
			t.Exposure = Direct
		case p.Servers[t.Server] == config.ExposureDeferred:
			t.Exposure = Deferred
		default:
			undecided = append(undecided, t)
			count++
			bytes += specBytes(t)
		}
	}
	mode := p.Mode
	if mode == config.ExposureAuto || mode == "" {
		mode = config.ExposureDirect
		if (p.DeferCount > 0 && count > p.DeferCount) || (p.DeferBytes > 0 && bytes > p.DeferBytes) {
			mode = config.ExposureDeferred
		}
	}
	for _, t := range undecided {
		if mode == config.ExposureDeferred {
			t.Exposure = Deferred
		} else {
			t.Exposure = Direct
		}
	}
}

func (p Policy) pinned(name string) bool { return p.NeverDefer.Match(name) }

// neverDefer compiles never_defer. config.Load has rejected bad patterns
// with their file and line; one that bypassed it pins nothing, which only
// changes where a tool is listed, never whether it may run.
func neverDefer(patterns []string) glob.List {
	var out glob.List
	for _, s := range patterns {
		if p, err := glob.Compile(s); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// specBytes approximates what a tool costs in the model's context: the
// JSON of its name, description and input schema.
func specBytes(t *Tool) int {
	b, err := json.Marshal(struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Schema      any    `json:"parameters"`
	}{t.ModelName, t.Tool.Description, t.Tool.InputSchema})
	if err != nil {
		return len(t.ModelName) + len(t.Tool.Description)
	}
	return len(b)
}
