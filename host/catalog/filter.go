package catalog

import "slices"

// Filter is a server's enabled_tools / disabled_tools pair. It matches raw
// tool names (what the server lists), never model names, so renaming never
// changes what is allowed. Apply it both when listing and again at call
// time: a model may propose a name it saw before the config changed.
type Filter struct {
	// Enabled is the allow-list. nil means unset (everything allowed); an
	// empty non-nil list allows nothing.
	Enabled []string
	// Disabled is the deny-list; it wins over Enabled.
	Disabled []string
}

// Allows reports whether the raw tool name passes the allow-list and then
// the deny-list.
func (f Filter) Allows(rawTool string) bool {
	if f.Enabled != nil && !slices.Contains(f.Enabled, rawTool) {
		return false
	}
	return !slices.Contains(f.Disabled, rawTool)
}
