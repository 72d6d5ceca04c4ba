package catalog

import "github.com/toolgate/toolgate/internal/glob"

// Filter is a server's enabled_tools / disabled_tools pair, compiled. It
// matches raw tool names (what the server lists), never model names, so
// renaming never changes what is allowed. Apply it both when listing and
// again at call time: a model may propose a name it saw before the config
// changed. Build it with [NewFilter].
type Filter struct {
	// enabled is the allow-list; nil means unset (everything allowed),
	// an empty non-nil list allows nothing.
	enabled glob.List
	// disabled is the deny-list; it wins over enabled.
	disabled glob.List
	// broken is set when a pattern did not compile: the filter then
	// allows nothing (see NewFilter).
	broken bool
}

// NewFilter compiles enabled_tools and disabled_tools (globs, see
// internal/glob). config.Load rejects a bad pattern with its file and
// line, so an error here means the lists did not come from config.Load;
// the returned filter then allows nothing (failing closed) and the error
// says which pattern is bad.
func NewFilter(enabled, disabled []string) (Filter, error) {
	e, err := glob.CompileList(enabled)
	if err != nil {
		return Filter{broken: true}, err
	}
	if enabled != nil && e == nil {
		e = glob.List{} // keep "empty allows nothing"
	}
	d, err := glob.CompileList(disabled)
	if err != nil {
		return Filter{broken: true}, err
	}
	return Filter{enabled: e, disabled: d}, nil
}

// Allows reports whether the raw tool name passes the allow-list and then
// the deny-list.
func (f Filter) Allows(rawTool string) bool {
	if f.broken {
		return false
	}
	if f.enabled != nil && !f.enabled.Match(rawTool) {
		return false
	}
	return !f.disabled.Match(rawTool)
}
