package catalog

import "testing"

func TestFilterAllows(t *testing.T) {
	tests := []struct {
		name   string
		filter Filter
		tool   string
		want   bool
	}{
		{"unset allows everything", Filter{}, "anything", true},
		{"allow-list admits listed", Filter{Enabled: []string{"read", "list"}}, "read", true},
		{"allow-list rejects others", Filter{Enabled: []string{"read", "list"}}, "write", false},
		{"empty allow-list allows nothing", Filter{Enabled: []string{}}, "read", false},
		{"deny-list rejects listed", Filter{Disabled: []string{"delete"}}, "delete", false},
		{"deny-list admits others", Filter{Disabled: []string{"delete"}}, "read", true},
		{"deny wins over allow", Filter{Enabled: []string{"delete"}, Disabled: []string{"delete"}}, "delete", false},
		{"raw names, not sanitized", Filter{Enabled: []string{"get-file"}}, "get_file", false},
		{"case sensitive", Filter{Disabled: []string{"Delete"}}, "delete", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.filter.Allows(tt.tool); got != tt.want {
				t.Errorf("%+v.Allows(%q) = %v, want %v", tt.filter, tt.tool, got, tt.want)
			}
		})
	}
}
