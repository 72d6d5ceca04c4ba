package catalog

import (
	"strings"
	"testing"
)

func TestFilterAllows(t *testing.T) {
	tests := []struct {
		name              string
		enabled, disabled []string
		tool              string
		want              bool
	}{
		{"unset allows everything", nil, nil, "anything", true},
		{"allow-list admits listed", []string{"read", "list"}, nil, "read", true},
		{"allow-list rejects others", []string{"read", "list"}, nil, "write", false},
		{"empty allow-list allows nothing", []string{}, nil, "read", false},
		{"deny-list rejects listed", nil, []string{"delete"}, "delete", false},
		{"deny-list admits others", nil, []string{"delete"}, "read", true},
		{"deny wins over allow", []string{"delete"}, []string{"delete"}, "delete", false},
		{"raw names, not sanitized", []string{"get-file"}, nil, "get_file", false},
		{"case sensitive", nil, []string{"Delete"}, "delete", true},
		{"allow-list glob", []string{"read_*"}, nil, "read_file", true},
		{"allow-list glob rejects others", []string{"read_*"}, nil, "write_file", false},
		{"deny-list glob", nil, []string{"*delete*"}, "bulk_delete_rows", false},
		{"* stays within a segment", []string{"github/*"}, nil, "github/issues/create", false},
		{"** crosses segments", []string{"github/**"}, nil, "github/issues/create", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := NewFilter(tt.enabled, tt.disabled)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Allows(tt.tool); got != tt.want {
				t.Errorf("enabled %q disabled %q: Allows(%q) = %v, want %v", tt.enabled, tt.disabled, tt.tool, got, tt.want)
			}
		})
	}
}

func TestFilterWithABadPatternAllowsNothing(t *testing.T) {
	for _, lists := range [][2][]string{{{"read["}, nil}, {nil, {"read["}}} {
		f, err := NewFilter(lists[0], lists[1])
		if err == nil || !strings.Contains(err.Error(), `"read["`) {
			t.Errorf("NewFilter(%q) error = %v, want one naming the pattern", lists, err)
		}
		if f.Allows("read_file") || f.Allows("anything") {
			t.Errorf("NewFilter(%q) allows a tool; a broken filter must allow nothing", lists)
		}
	}
}
